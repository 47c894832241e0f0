/**
 * The operator API (`/api/operator/*`, docs/deploy.md#operating-it) as the operator page calls it:
 * one typed method per route, the operator token as a bearer header, amounts kept as the USD
 * decimal strings the service sends (shown with `usd()`, never turned into numbers). A refusal
 * becomes an `OperatorApiError` whose message is the problem+json `detail`, a sentence to show.
 */

import type {
  KeyScope,
  KeyView,
  OperatorPayment,
  PauseView as Pause,
  PauseTarget,
} from "../../../src/protocol/operator.js";

export {
  KEY_SCOPES,
  type KeyLimitsView as KeyLimits,
  type KeyScope,
  type KeyView,
  type OperatorPayment,
  type PauseTarget,
  type PauseView as Pause,
} from "../../../src/protocol/operator.js";

export interface Refusal {
  at: string;
  caller: string | null;
  reason: string;
  message: string;
  service: string | null;
  amountUsd: string | null;
}

/** POST /api/operator/keys: caps as USD decimal strings, `expiresIn` as "90m", "12h", "30d". */
export interface CreateKeyBody {
  name: string;
  perTransaction?: string;
  perRequest?: string;
  daily?: string;
  wallets?: string[];
  expiresIn?: string;
  scopes?: KeyScope[];
}

/** A key with its token: the only time the token is ever shown. */
export interface IssuedKey {
  key: KeyView;
  token: string;
}

/** The API's refusal: `message` is a sentence for the page, `code` the stable problem code. */
export class OperatorApiError extends Error {
  override readonly name = "OperatorApiError";
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    /** The fields the service refused (`errors` of the problem), for a form to show beside each. */
    readonly fields: ReadonlyArray<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

/**
 * What a failed answer says, as a sentence: the problem's `detail` (else its `title`, else the
 * status), then each field the service named in `errors` ("wallets.0: not a wallet address").
 */
export async function problemOf(response: Response): Promise<OperatorApiError> {
  const body = (await response.json().catch(() => ({}))) as {
    detail?: unknown;
    title?: unknown;
    code?: unknown;
    errors?: unknown;
  };
  const text =
    typeof body.detail === "string" && body.detail
      ? body.detail
      : typeof body.title === "string" && body.title
        ? body.title
        : `The service answered HTTP ${response.status}.`;
  const named = Array.isArray(body.errors)
    ? body.errors.filter(
        (e): e is { path: string; message: string } =>
          typeof e?.path === "string" && typeof e?.message === "string",
      )
    : [];
  const fields = named
    .map((e) => `${e.path}: ${e.message}`)
    // The detail often says it already ("The key is not valid (expiresIn: ...)"): once is enough.
    .filter((said) => !text.includes(said));
  const message = fields.length > 0 ? `${text.replace(/\.?$/, ".")} ${fields.join("; ")}.` : text;
  return new OperatorApiError(
    message,
    response.status,
    typeof body.code === "string" ? body.code : undefined,
    named.map(({ path, message }) => ({ path, message })),
  );
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Who the operator says they are (`X-Operator`): a name the audit trail records, not a secret. */
export const OPERATOR_NAME = /^[\w.@ -]{1,64}$/;

export interface OperatorApiOptions {
  /** The service's origin ("" for this page's own). */
  base?: string;
  /** Sent as `X-Operator` when it is a valid name; the service records "operator-api" otherwise. */
  operator?: string | undefined;
  /** For tests. */
  fetchImpl?: Fetch;
}

export class OperatorApi {
  readonly #token: string;
  readonly #fetch: Fetch;
  readonly #base: string;
  readonly #operator: string | undefined;

  constructor(token: string, { base = "", operator, fetchImpl }: OperatorApiOptions = {}) {
    this.#token = token;
    this.#base = base;
    this.#operator = operator && OPERATOR_NAME.test(operator) ? operator : undefined;
    this.#fetch = fetchImpl ?? ((input, init) => fetch(input, init));
  }

  async #call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.#base}/api/operator${path}`, {
        method,
        cache: "no-store",
        headers: {
          Authorization: `Bearer ${this.#token}`,
          Accept: "application/json",
          ...(this.#operator ? { "X-Operator": this.#operator } : {}),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new OperatorApiError("The service cannot be reached.", 0, undefined);
    }
    if (!response.ok) throw await problemOf(response);
    return (await response.json()) as T;
  }

  async keys(): Promise<KeyView[]> {
    return (await this.#call<{ keys: KeyView[] }>("GET", "/keys")).keys;
  }

  createKey(body: CreateKeyBody): Promise<IssuedKey> {
    return this.#call<IssuedKey>("POST", "/keys", body);
  }

  async revokeKey(name: string): Promise<KeyView> {
    return (await this.#call<{ key: KeyView }>("POST", `/keys/${encodeURIComponent(name)}/revoke`)).key;
  }

  rotateKey(name: string): Promise<IssuedKey> {
    return this.#call<IssuedKey>("POST", `/keys/${encodeURIComponent(name)}/rotate`);
  }

  async pauses(): Promise<Pause[]> {
    return (await this.#call<{ pauses: Pause[] }>("GET", "/pauses")).pauses;
  }

  async pause(target: PauseTarget, reason: string): Promise<Pause[]> {
    return (await this.#call<{ pauses: Pause[] }>("POST", "/pause", { ...target, reason })).pauses;
  }

  async resume(target: PauseTarget): Promise<Pause[]> {
    return (await this.#call<{ pauses: Pause[] }>("POST", "/resume", target)).pauses;
  }

  async payments(limit = 50): Promise<OperatorPayment[]> {
    return (await this.#call<{ payments: OperatorPayment[] }>("GET", `/payments?limit=${limit}`)).payments;
  }

  async unclear(): Promise<OperatorPayment[]> {
    return (await this.#call<{ payments: OperatorPayment[] }>("GET", "/unclear")).payments;
  }

  async refusals(limit = 50): Promise<Refusal[]> {
    return (await this.#call<{ refusals: Refusal[] }>("GET", `/refusals?limit=${limit}`)).refusals;
  }
}
