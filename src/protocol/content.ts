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
