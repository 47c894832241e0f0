/**
 * What PostgreSQL stores of text from outside (a model's words, a service's reason, a 402's
 * `extra`): it refuses NUL in text and jsonb, and a lone surrogate (half an emoji, left by a cut)
 * escaped in jsonb, so the write fails and its record is lost. Strings and keys are made
 * well-formed (the half becomes U+FFFD) and lose their NULs; the memory store does the same, so
 * both keep the same bytes.
 */

const needsCleaning = (text: string) => !text.isWellFormed() || text.includes("\u0000");

/** Text as PostgreSQL stores it. */
export function storableText<T extends string | null | undefined>(text: T): T {
  return (
    typeof text === "string" && needsCleaning(text) ? text.toWellFormed().replaceAll("\u0000", "") : text
  ) as T;
}

/** A value whose strings and keys are all storable (a copy only where one was not). Dates and numbers stay. */
export function storable<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === "string") return storableText(value);
  if (value === null || typeof value !== "object" || value instanceof Date || depth > 256) return value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), walk(v, depth + 1)]));
}

/** JSON text for a jsonb parameter, storable. */
export function jsonb(value: unknown): string {
  return JSON.stringify(storable(value));
}
