import { int, optionalString, url, usd } from "./fields.js";

/** Tabs' settings (docs/payments.md#tabs; docs/deploy.md lists the variables). Amounts atomic USD. */
export interface TabsConfig {
  /** TAB_FACILITATOR_URL: where tabs' own transfers settle (the embedded devnet brings its own). */
  facilitatorUrl?: string;
  /** TAB_SECRET (hex, 32 bytes or more); absent: `<DATA_DIR>/tab-secret`, made once. */
  secret?: string;
  maxAmount: bigint;
  defaultSeconds: number;
  maxSeconds: number;
}

export const TAB_FIELDS = {
  TAB_FACILITATOR_URL: url,
  TAB_SECRET: optionalString.refine((v) => !v || /^[0-9a-fA-F]{64,}$/.test(v), "at least 32 bytes of hex"),
  TAB_MAX_USD: usd.prefault("10"),
  TAB_SECONDS: int(60, 30 * 86_400).default(3600),
  TAB_MAX_SECONDS: int(60, 30 * 86_400).default(86_400),
};

export function tabsConfig(e: {
  TAB_FACILITATOR_URL?: string | undefined;
  TAB_SECRET?: string | undefined;
  TAB_MAX_USD: bigint;
  TAB_SECONDS: number;
  TAB_MAX_SECONDS: number;
}): TabsConfig {
  return {
    ...(e.TAB_FACILITATOR_URL ? { facilitatorUrl: e.TAB_FACILITATOR_URL } : {}),
    ...(e.TAB_SECRET ? { secret: e.TAB_SECRET } : {}),
    maxAmount: e.TAB_MAX_USD,
    defaultSeconds: Math.min(e.TAB_SECONDS, e.TAB_MAX_SECONDS),
    maxSeconds: e.TAB_MAX_SECONDS,
  };
}
