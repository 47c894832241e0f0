import { useEffect, useState } from "react";
import { DEFAULT_MODEL, MODEL_ALIASES, type ModelAlias } from "../../src/protocol/models.js";
import { CAIP2_NETWORK } from "../../src/protocol/networks.js";
import type { TurnFields } from "./chat/types.js";

/** What each public model name is for, in words (the names: src/protocol/models.ts). */
const MODEL_HINTS: Record<ModelAlias, string> = {
  "aimodel-2.0-flash-exp": "latest, fastest",
  "aimodel-1.5-pro": "complex reasoning",
  "aimodel-1.5-flash": "balanced",
};

/** The public model names (docs/protocol.md): what each is backed by is the server's configuration. */
export const MODELS = MODEL_ALIASES.map((id) => ({ id, hint: MODEL_HINTS[id] }));

/** What a person sets on the page; kept in this browser's storage. Amounts are USD as typed. */
export interface Settings {
  perTransaction: string;
  perRequest: string;
  daily: string;
  /** Payments above this ask the wallet even when the server could sign ("" = the server's rule). */
  approvalAbove: string;
  allowedNetworks: string;
  model: string;
  temperature: number;
  maxTokens: number;
  token: string;
}

export const DEFAULT_SETTINGS: Settings = {
  perTransaction: "1.00",
  perRequest: "2.00",
  daily: "10.00",
  approvalAbove: "",
  allowedNetworks: "",
  model: DEFAULT_MODEL,
  temperature: 0.5,
  maxTokens: 4000,
  token: "",
};

const KEY = "x402-chat-agent.settings";

function load(): Settings {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? "{}") as Partial<Settings>;
    return { ...DEFAULT_SETTINGS, ...saved };
  } catch {
    return DEFAULT_SETTINGS;
  }
}

export function useSettings(): [Settings, (next: Settings) => void] {
  const [settings, setSettings] = useState(load);
  useEffect(() => {
    try {
      // The bearer token is not kept: it lasts as long as the page.
      localStorage.setItem(KEY, JSON.stringify({ ...settings, token: "" }));
    } catch {
      // storage may be off (private mode): the settings last for this page
    }
  }, [settings]);
  return [settings, setSettings];
}

/** The spending fields of the panel, with the names people see (the send refusal names them). */
export const LIMIT_FIELDS = [
  ["perTransaction", "Per payment", "The most one payment may cost"],
  ["perRequest", "Per request", "The most one question may spend in all"],
  ["daily", "Daily", "The most this wallet may spend in 24 hours"],
  [
    "approvalAbove",
    "Ask me above",
    "Payments above this wait for your wallet even when the server could sign",
  ],
] as const;

export type LimitField = (typeof LIMIT_FIELDS)[number][0];

/**
 * Why a typed USD amount is not one the protocol accepts (digits, at most 6 decimals, a dot), or
 * undefined when it is (or is empty: the server's own limit then applies).
 */
export function usdProblem(value: string): string | undefined {
  const v = value.trim();
  if (v === "") return undefined;
  if (/^\d{1,7}(\.\d{1,6})?$/.test(v)) return undefined;
  if (v.startsWith("-")) return "cannot be negative";
  if (/^\d+,\d+$/.test(v)) return `use a dot for cents: ${v.replace(",", ".")}, not ${v}`;
  if (/[$€£]|usd/i.test(v)) return "digits only, without a currency sign: 1.50";
  if (/^\d+\.\d{7,}$/.test(v)) return "at most 6 decimals";
  if (/^\d{8,}(\.\d*)?$/.test(v)) return "at most 9999999";
  return "a USD amount such as 0.50";
}

/** A limit the page cannot read: which field (its label), what was typed, and why. */
export interface SettingsProblem {
  field: LimitField | "allowedNetworks";
  label: string;
  value: string;
  problem: string;
}

/** The networks typed, one per comma or space. */
function networksOf(settings: Settings): string[] {
  return settings.allowedNetworks
    .split(/[\s,]+/)
    .map((n) => n.trim())
    .filter(Boolean);
}

/**
 * Why the typed networks are not a list the service takes (CAIP-2 ids), or undefined. Never
 * dropped instead: without the list the request could pay on any network the server allows.
 */
export function networksProblem(value: string): string | undefined {
  const bad = networksOf({ allowedNetworks: value } as Settings).find((n) => !CAIP2_NETWORK.test(n));
  return bad === undefined
    ? undefined
    : `${bad.slice(0, 40)} is not a network id; write eip155:8453 or solana:…`;
}

/** Every limit the page cannot read: while there is one, nothing is sent (it would be dropped). */
export function settingsProblems(settings: Settings): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  for (const [field, label] of LIMIT_FIELDS) {
    const problem = usdProblem(settings[field]);
    if (problem) problems.push({ field, label, value: settings[field], problem });
  }
  const networks = networksProblem(settings.allowedNetworks);
  if (networks)
    problems.push({
      field: "allowedNetworks",
      label: "Networks",
      value: settings.allowedNetworks,
      problem: networks,
    });
  return problems;
}

/** The request fields for these settings and this wallet (limits only with a wallet: they apply to one). */
export function requestFields(settings: Settings, walletAddress: string | undefined): TurnFields {
  const body: TurnFields = {
    model: settings.model as TurnFields["model"],
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
  };
  if (!walletAddress) return body;
  body.walletAddress = walletAddress;
  const limits: NonNullable<TurnFields["spendingLimits"]> = {};
  for (const name of ["perTransaction", "perRequest", "daily", "approvalAbove"] as const) {
    const value = settings[name].trim();
    if (value && !usdProblem(value)) limits[name] = value;
  }
  const networks = networksOf(settings);
  if (networks.length > 0) limits.allowedNetworks = networks;
  if (Object.keys(limits).length > 0) body.spendingLimits = limits;
  return body;
}
