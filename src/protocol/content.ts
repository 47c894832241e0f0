/**
 * Message content safety: characters that hide or reorder text (bidi overrides and isolates,
 * Unicode tag characters used for invisible prompt injection, zero-width spaces, word joiners and
 * invisible operators, byte order marks), control characters other than tab/newline/carriage
 * return, and lone surrogates (text that is not valid Unicode). Joiners and variation selectors
 * have honest single uses (emoji, Persian and Indic scripts, ideograph variants), so one at a time
 * passes; a run of them, which is how bytes are smuggled invisibly, does not. The one run honest
 * text has, an emoji's presentation selector before a joiner (U+FE0F U+200D), passes too.
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u180E\u200B\u200E\u200F\u061C\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|[\u{E0000}-\u{E007F}]/u;

/** One joiner or variation selector, the characters whose runs are unsafe (one source for each use). */
const JOINER = "(?:\\u200C|\\u200D|[\\uFE00-\\uFE0F]|[\\u{E0100}-\\u{E01EF}])";
/** Runs of joiners and variation selectors; each is unsafe unless it is {@link EMOJI_JOIN}. */
const INVISIBLE_RUN = new RegExp(`${JOINER}{2,}`, "gu");
const EMOJI_JOIN = "\uFE0F\u200D";

/** Text without its unsafe runs, counting the characters taken out. */
function withoutRuns(text: string, count: (run: string) => void = () => {}): string {
  return text.replace(INVISIBLE_RUN, (run) => {
    if (run === EMOJI_JOIN) return run;
    count(run);
    return "";
  });
}

function unsafeRun(text: string): string | undefined {
  for (const [run] of text.matchAll(INVISIBLE_RUN)) if (run !== EMOJI_JOIN) return run;
  return undefined;
}

/** Returns a reason when the text holds unsafe characters, else undefined. */
export function unsafeContentReason(text: string): string | undefined {
  if (!text.isWellFormed()) return "contains invalid Unicode (a lone surrogate)";
  const single = UNSAFE.exec(text)?.[0];
  const found = single ?? unsafeRun(text);
  if (found === undefined) return undefined;
  const what = single ? "a disallowed invisible or control character" : "a run of invisible characters from";
  const cp = found.codePointAt(0) ?? 0;
  return `contains ${what} (U+${cp.toString(16).toUpperCase().padStart(4, "0")})`;
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
  // After the single characters: taking those out can join two runs into one, while taking out a
  // whole run leaves two characters that are not in it side by side.
  clean = withoutRuns(clean, (run) => {
    for (const _ of run) removed++;
  });
  return { text: clean, removed };
}

/**
 * A piece of streamed text without the unsafe characters. Lone surrogates stay: a piece may end
 * inside a pair that the next piece completes.
 */
export function withoutUnsafe(text: string): string {
  return withoutRuns(text.replace(UNSAFE_ALL, ""));
}

/** The joiners and selectors a text ends with (at most the two an emoji's join leaves). */
const TRAILING_RUN = new RegExp(`${JOINER}+$`, "u");
const LEADING_RUN = new RegExp(`^${JOINER}+`, "u");

/**
 * Streamed pieces of one text, cleaned as that text: {@link withoutUnsafe} on each piece, and a run
 * of joiners or selectors split across pieces (one per piece, as a model's tokens come, or cut
 * inside a surrogate pair: its first half waits for the next piece) is cut where the next piece
 * would extend it. What was sent is never taken back: the run's first character, sent
 * with the piece before, stays, as one alone would.
 */
export function textCleaner(): (piece: string) => string {
  let tail = "";
  let held = ""; // the first half of a pair the piece cut, sent with its second
  return (piece) => {
    let text = held + piece;
    held = "";
    if (/[\uD800-\uDBFF]$/.test(text)) {
      held = text.slice(-1);
      text = text.slice(0, -1);
    }
    let clean = withoutUnsafe(text);
    const leading = LEADING_RUN.exec(clean)?.[0];
    if (tail && leading && tail + leading !== EMOJI_JOIN) clean = clean.slice(leading.length);
    if (clean) tail = TRAILING_RUN.exec(clean)?.[0] ?? "";
    return clean;
  };
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
