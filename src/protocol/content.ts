/**
 * Message content safety: characters that hide or reorder text (bidi overrides and isolates,
 * Unicode tag characters used for invisible prompt injection), control characters other than
 * tab/newline/carriage return, and lone surrogates (text that is not valid Unicode).
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u200E\u200F\u061C\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]/u;

/** Returns a reason when the text holds unsafe characters, else undefined. */
export function unsafeContentReason(text: string): string | undefined {
  if (!text.isWellFormed()) return "contains invalid Unicode (a lone surrogate)";
  const match = UNSAFE.exec(text);
  if (!match) return undefined;
  const cp = match[0].codePointAt(0) ?? 0;
  return `contains a disallowed invisible or control character (U+${cp.toString(16).toUpperCase().padStart(4, "0")})`;
}

const UNSAFE_ALL = new RegExp(UNSAFE.source, "gu");

/** Text from outside with the unsafe characters taken out, and how many were. */
export function cleanText(text: string): { text: string; removed: number } {
  let removed = 0;
  let clean = text;
  if (!clean.isWellFormed()) {
    // Lone surrogates become U+FFFD; count each one replaced.
    const wellFormed = clean.toWellFormed();
    for (let i = 0; i < clean.length; i++) if (clean[i] !== wellFormed[i]) removed++;
    clean = wellFormed;
  }
  clean = clean.replace(UNSAFE_ALL, () => {
    removed++;
    return "";
  });
  return { text: clean, removed };
}

/**
 * A piece of streamed text without the unsafe characters. Lone surrogates stay: a piece may end
 * inside a pair that the next piece completes.
 */
export function withoutUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, "");
}

/** How deep the content rule walks; deeper values become {@link NESTED_TOO_DEEP}. */
const MAX_CLEAN_DEPTH = 200;
export const NESTED_TOO_DEEP = "[nested too deeply: not shown]";

/**
 * The one content rule for everything the model reads from outside (paid services' answers,
 * discovery listings, a 402's fields, a service's error text): the characters client messages may
 * not carry are removed from every string and every object key, at any depth (past 200 levels a value is cut, never walked), and counted so the
 * caller can say what was removed. Other values pass unchanged.
 */
export function cleanUntrusted<T>(value: T): { value: T; removed: number } {
  let removed = 0;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") {
      const c = cleanText(v);
      removed += c.removed;
      return c.text;
    }
    if (v === null || typeof v !== "object") return v;
    // What nests deeper is cut here rather than overflow the stack (every reader bounds it before).
    if (depth >= MAX_CLEAN_DEPTH) return NESTED_TOO_DEEP;
    if (Array.isArray(v)) return v.map((inner) => walk(inner, depth + 1));
    // fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return Object.fromEntries(
      Object.entries(v).map(([k, inner]) => [walk(k, depth), walk(inner, depth + 1)]),
    );
  };
  const cleaned = walk(value, 0) as T;
  return { value: cleaned, removed };
}
