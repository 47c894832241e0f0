/**
 * A JSON value with every object's keys in order, at every depth (arrays keep theirs): the same
 * value however its keys were written, for comparing two bodies as values rather than as text.
 */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
}

/** The keys whose values are USD amounts in a request body: spending limits, a key's caps, a tab's. */
const AMOUNT_KEYS = ["perTransaction", "perRequest", "daily", "approvalAbove", "amount"];
const AMOUNT_KEY = new Set(AMOUNT_KEYS);
/** One of those keys with a number for its value, somewhere in the text. */
const AMOUNT_NUMBER = new RegExp(`"(?:${AMOUNT_KEYS.join("|")})"\\s*:\\s*-?[0-9]`);

/**
 * `JSON.parse` for request bodies: an amount sent as a JSON number keeps the text it was written as
 * (`1e3`, `-0`, `1.0000000000000001`), so the amount rules (at most 6 decimals, no exponent, not
 * negative) read what was sent rather than the float it rounds to. Other numbers stay numbers.
 * The reviver (which needs Node 22's `context.source`) runs only on a text that may hold such an
 * amount: most bodies have none, and parse as plainly (and as deep) as ever.
 */
export function parseJsonAmountsAsWritten(text: string): unknown {
  // A key written with escapes (`"dail\u0079"`) is the same key once parsed: such a text is revived.
  const maybe = AMOUNT_NUMBER.test(text) || text.includes("\\u");
  return maybe ? JSON.parse(text, amountsAsWritten) : JSON.parse(text);
}

function amountsAsWritten(key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number" || !AMOUNT_KEY.has(key)) return value;
  return context?.source ?? value;
}

/**
 * Whether a JSON value nests no deeper than `max` objects and arrays, measured without recursion
 * (a value nested thousands deep must not overflow the stack here, nor anywhere it is walked later).
 */
export function nestsAtMost(value: unknown, max: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item === "object" && item !== null)
        for (const child of Object.values(item)) next.push(child);
    }
    if (next.length > 0 && depth + 1 > max) return false;
    level = next;
  }
  return true;
}
