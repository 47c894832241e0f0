import { context, isSpanContextValid, trace } from "@opentelemetry/api";
import { pino } from "pino";

/**
 * Logging through pino: one JSON object per line on stderr, with levels. Callers pass a message and
 * fields, never secrets; as a second line of defence the fields that could hold one are redacted
 * by path, and an error passed as `err` keeps its type, message, stack and causes, with
 * signature-long hex, bearer tokens, key fields and the keys in providers' URLs masked in its
 * text. A line written while a
 * traced span is active (docs/deploy.md#traces-and-metrics) carries its `trace_id` and `span_id`.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Fields that may carry a secret wherever they appear (one level deep, or at the top). */
const SECRET_FIELDS = [
  "authorization",
  "bearerToken",
  "token",
  "devToken",
  "privateKey",
  "secretKey",
  "quoteSecret",
  "signature",
  "password",
  "apiKey",
  "payment-signature",
  "x-payment",
  "tab",
  "x-tab-token",
];
/** Each as written here, in capitals and capitalised per word (headers arrive in any of them). */
const SPELLINGS = [
  ...new Set(
    SECRET_FIELDS.flatMap((f) => [
      f,
      f.toUpperCase(),
      f.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()),
    ]),
  ),
];
export const REDACTED_PATHS = SPELLINGS.flatMap((f) => [`["${f}"]`, `*["${f}"]`, `*.headers["${f}"]`]);

const SECRET_TEXT: [RegExp, string][] = [
  [/Bearer\s+\S+/gi, "Bearer [redacted]"],
  [/0x[0-9a-fA-F]{128,}/g, "0x[redacted]"],
  // API keys' tokens, tabs' tokens and wallet sessions' tokens (src/operator, src/payments/tabs, src/signin).
  [/\bx4[ctw]_[A-Za-z0-9_-]{20,}/g, "x4_[redacted]"],
  // A JSON Web Token anywhere (a login's bearer, a token in a URL).
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g, "[jwt redacted]"],
  [/("?(?:private|secret)Key"?\s*[:=]\s*)("[^"]*"|\[[^\]]*\]|\S+)/gi, "$1[redacted]"],
  // A provider's URL carries its key (RPC_URLS, DATABASE_URL; a library's error quotes the URL):
  // credentials, a path segment as long as a key (Alchemy's /v2/KEY, Infura's /v3/KEY), a
  // key-like query parameter (?api-key=...).
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@"']+:[^/\s@"']*@/gi, "$1[redacted]@"],
  [/(\bhttps?:\/\/[^/\s"']+(?:\/[^\s"'?#]*)?\/)[A-Za-z0-9_-]{20,}(?=[/?#\s"']|$)/gi, "$1[redacted]"],
  [
    /([?&](?:[^=&\s"']*(?:key|token|secret|auth|sig|pass|pwd|jwt|session|cred)[^=&\s"']*|code)=)[^&#\s"']+/gi,
    "$1[redacted]",
  ],
];

/** Masks signature-long hex, bearer tokens and key fields in free text (error messages, stacks). */
export function scrubSecrets(text: string): string {
  return SECRET_TEXT.reduce((out, [pattern, mask]) => out.replace(pattern, mask), text);
}

/** pino's error serializer (type, message, stack, code, causes), with secrets masked in its text. */
function errorSerializer(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  const scrub = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return scrubSecrets(value);
    if (depth > 16 || value === null || typeof value !== "object") return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, depth + 1)]));
  };
  return scrub(serialized, 0);
}

export interface LoggerOptions {
  /** pino level: "debug", "info" (default), "warn", "error", "silent". */
  level?: string;
  /** Where lines go (default stderr, written synchronously so nothing is lost on exit). */
  destination?: { write(line: string): unknown };
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const log = pino(
    {
      level: options.level ?? "info",
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      serializers: { err: errorSerializer },
      mixin: traceIds,
    },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
  return {
    debug: (msg, fields) => log.debug(own(fields), msg),
    info: (msg, fields) => log.info(own(fields), msg),
    warn: (msg, fields) => log.warn(own(fields), msg),
    error: (msg, fields) => log.error(own(fields), msg),
  };
}

/** The active span's ids, when tracing is on and a span is active (otherwise nothing: no cost). */
function traceIds(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}

/**
 * The caller's fields without the ones every line carries already: pino writes its base (`pid`)
 * and the caller's fields side by side, so a `pid` passed again would appear twice in one line.
 */
function own(fields: Record<string, unknown> = {}): Record<string, unknown> {
  if (!("pid" in fields)) return fields;
  const { pid: _pid, ...rest } = fields;
  return rest;
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
