/**
 * Money is bigint atomic units everywhere inside the service. USDC has 6 decimals, so one USD is
 * 1_000_000 atomic units. Decimals appear only at the edges: parsing a request and formatting a reply.
 */

/** Decimals of USDC (and of every USD amount this service handles). */
export const USD_DECIMALS = 6;
const SCALE = 10n ** BigInt(USD_DECIMALS);

/** A decimal USD amount: digits, an optional point and at most 6 decimals. No sign, no exponent. */
const USD_PATTERN = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,6})?$/;

export type ParseUsdResult = { ok: true; atomic: bigint } | { ok: false; reason: string };

/**
 * Parse a decimal USD amount ("0.25", "10", or a JSON number such as 0.25) to atomic units.
 * Numbers are turned into their shortest decimal text first, so 0.1 is exactly 100000n; a number
 * whose text needs an exponent (1e-7, 1e21) is refused rather than guessed.
 */
export function parseUsd(value: unknown): ParseUsdResult {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { ok: false, reason: "must be a finite amount" };
    text = String(value);
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    return { ok: false, reason: 'must be a decimal USD amount, e.g. "0.50"' };
  }
  if (text.startsWith("-")) return { ok: false, reason: "must not be negative" };
  const match = USD_PATTERN.exec(text);
  if (!match) {
    if (/^[0-9]*\.[0-9]{7,}$/.test(text)) return { ok: false, reason: "has more than 6 decimals" };
    return { ok: false, reason: 'must be a decimal USD amount with at most 6 decimals, e.g. "0.50"' };
  }
  const whole = BigInt(match[1] ?? "0");
  const fraction = (match[2] ?? ".").slice(1).padEnd(USD_DECIMALS, "0");
  return { ok: true, atomic: whole * SCALE + BigInt(fraction || "0") };
}

/**
 * The lower of two caps stated as USD text, either of which may be absent. One that does not parse
 * is returned as it is, so whoever reads it refuses it rather than have it silently dropped.
 */
export function lowerUsd(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const [pa, pb] = [parseUsd(a), parseUsd(b)];
  if (!pa.ok) return a;
  if (!pb.ok) return b;
  return pb.atomic < pa.atomic ? b : a;
}

/** Format atomic units as a plain decimal USD string with 2 to 6 decimals: 10000n -> "0.01". */
export function formatUsd(atomic: bigint): string {
  const negative = atomic < 0n;
  const abs = negative ? -atomic : atomic;
  const whole = abs / SCALE;
  let fraction = (abs % SCALE).toString().padStart(USD_DECIMALS, "0").replace(/0+$/, "");
  if (fraction.length < 2) fraction = fraction.padEnd(2, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

/** "$0.01" for people; the protocol carries formatUsd's plain string. */
export function displayUsd(atomic: bigint): string {
  return `$${formatUsd(atomic)}`;
}
