/**
 * The operator page's pure parts (docs/operator-page.md): the create-key form read into the API's
 * body (or the fields' problems), how long ago something happened, a key's limits in words, and
 * where the operator token is kept (the tab's sessionStorage: never the URL, never localStorage).
 */
import { usd } from "../format.js";
import { type CreateKeyBody, type KeyLimits, type KeyScope, OperatorApiError, type Pause } from "./api.js";

/** What the create-key form holds, as typed. */
export interface KeyForm {
  name: string;
  perTransaction: string;
  perRequest: string;
  daily: string;
  /** Wallet addresses, separated by commas, spaces or lines ("" = any wallet). */
  wallets: string;
  /** "90m", "12h", "30d" ("" = never expires). */
  expiresIn: string;
  scopes: KeyScope[];
}

export const EMPTY_KEY_FORM: KeyForm = {
  name: "",
  perTransaction: "",
  perRequest: "",
  daily: "",
  wallets: "",
  expiresIn: "",
  scopes: ["chat"],
};

export type KeyFormErrors = Partial<Record<keyof KeyForm, string>>;

/**
 * The service's refusal of a new key, field by field, for the form to show beside each field: its
 * `errors` by their first path segment ("wallets.1" is the wallets field), and a taken name.
 */
export function serverKeyFormErrors(error: unknown): KeyFormErrors {
  const out: KeyFormErrors = {};
  if (!(error instanceof OperatorApiError)) return out;
  if (error.code === "key_exists") out.name = "A key with this name exists already; choose another.";
  for (const { path, message } of error.fields) {
    const field = path.split(".")[0] as keyof KeyForm;
    if (!Object.hasOwn(EMPTY_KEY_FORM, field) || out[field]) continue;
    out[field] = path === field ? message : `${path}: ${message}`;
  }
  return out;
}

const USD = /^\d+(\.\d{1,6})?$/;
const DURATION = /^\d+[mhd]$/;
const CAPS = ["perTransaction", "perRequest", "daily"] as const;

/** The form as the API's body, or what is wrong with each field (the service checks again). */
export function createKeyBody(form: KeyForm): { body: CreateKeyBody } | { errors: KeyFormErrors } {
  const errors: KeyFormErrors = {};
  const name = form.name.trim();
  if (!name) errors.name = "Give the key a name.";
  const body: CreateKeyBody = { name };
  for (const cap of CAPS) {
    const value = form[cap].trim().replace(/^\$/, "");
    if (!value) continue;
    if (USD.test(value)) body[cap] = value;
    else errors[cap] = "A USD amount such as 0.50 (at most 6 decimals), or empty for none.";
  }
  const wallets = form.wallets.split(/[\s,]+/).filter(Boolean);
  if (wallets.length > 0) body.wallets = wallets;
  const expiresIn = form.expiresIn.trim();
  if (expiresIn && !DURATION.test(expiresIn))
    errors.expiresIn = "A duration such as 90m, 12h or 30d, or empty.";
  else if (expiresIn) body.expiresIn = expiresIn;
  if (form.scopes.length === 0) errors.scopes = "Choose at least one scope.";
  else body.scopes = [...form.scopes];
  return Object.keys(errors).length > 0 ? { errors } : { body };
}

/** How long ago `iso` was at `now`, in words a table cell fits: "40 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function age(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return "";
  const seconds = Math.max(0, Math.floor((now - at) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** A key's caps in words: "$0.50 a payment, $2.00 a day"; "the service's own" when it has none. */
export function limitsText(limits: KeyLimits): string {
  const parts = [
    limits.perTransaction === null ? undefined : `${usd(limits.perTransaction)} a payment`,
    limits.perRequest === null ? undefined : `${usd(limits.perRequest)} a request`,
    limits.daily === null ? undefined : `${usd(limits.daily)} a day`,
  ].filter((p): p is string => p !== undefined);
  return parts.length > 0 ? parts.join(", ") : "the service's own";
}

/** A time as the operator's browser writes it, or the text itself when it is not a time. */
export function when(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** The pause of every payment, if there is one, and the keys paused one by one. */
export function splitPauses(pauses: Pause[]): { all: Pause | undefined; keys: Pause[] } {
  return {
    all: pauses.find((p) => p.scope === "all"),
    keys: pauses.filter((p) => p.scope === "key"),
  };
}

/** Where the token lives: the tab's sessionStorage, gone when the tab closes or on "Sign out". */
export const TOKEN_STORAGE_KEY = "x402.operator.token";
/** The operator's name for the audit trail (`X-Operator`), kept beside it. */
export const NAME_STORAGE_KEY = "x402.operator.name";

/** Who is signed in on this tab: the operator token, and the name they gave, if any. */
export interface OperatorSession {
  token: string;
  name?: string;
}

export function readSession(storage: Pick<Storage, "getItem">): OperatorSession | undefined {
  try {
    const token = storage.getItem(TOKEN_STORAGE_KEY);
    if (!token) return undefined;
    const name = storage.getItem(NAME_STORAGE_KEY);
    return name ? { token, name } : { token };
  } catch {
    return undefined;
  }
}

export function keepSession(
  storage: Pick<Storage, "setItem" | "removeItem">,
  session: OperatorSession,
): void {
  try {
    storage.setItem(TOKEN_STORAGE_KEY, session.token);
    if (session.name) storage.setItem(NAME_STORAGE_KEY, session.name);
    else storage.removeItem(NAME_STORAGE_KEY);
  } catch {
    // Storage refused (a private window's quota): the page keeps it in memory for this view only.
  }
}

export function forgetSession(storage: Pick<Storage, "removeItem">): void {
  try {
    storage.removeItem(TOKEN_STORAGE_KEY);
    storage.removeItem(NAME_STORAGE_KEY);
  } catch {
    // Nothing kept.
  }
}
