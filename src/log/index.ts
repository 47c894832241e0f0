/**
 * A tiny structured logger: one JSON object per line on stderr. Callers pass fields, never secrets;
 * `redact` masks the values of keys that look secret as a second line of defence.
 */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const SECRET_KEY = /key|secret|token|signature|authorization|password|private/i;

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = SECRET_KEY.test(k) ? "[redacted]" : v;
  return out;
}

export function createLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const log = (level: string, msg: string, fields?: Record<string, unknown>) =>
    write(
      `${JSON.stringify({ t: new Date().toISOString(), level, msg, ...(fields ? redact(fields) : {}) })}\n`,
    );
  return {
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
