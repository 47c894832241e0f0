import { parseServerJson } from "../protocol/stream.js";

/**
 * What the SDK throws. A refusal before the stream opens is an RFC 9457 problem+json body
 * (docs/protocol.md, "Errors before the stream"); {@link ChatHttpError} carries it whole, so a
 * caller branches on `error.code` (`rate_limited`, `approval_expired`...) and shows `error.detail`.
 */

/** An RFC 9457 problem as the service sends it: the standard members, its stable `code`, and extras. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  /** The service's stable snake_case code (src/errors/index.ts). */
  code: string;
  /** Field-level problems of a 400. */
  errors?: Array<{ path: string; message: string }>;
  /** With 429: seconds until the caller may send again. */
  retryAfterSeconds?: number;
  [member: string]: unknown;
}

/** The service refused the request before any stream began (any non-2xx answer). */
export class ChatHttpError extends Error {
  override name = "ChatHttpError";
  /** The HTTP status. */
  readonly status: number;
  /** The problem's `code`, or `http_<status>` when the body was not problem+json (a proxy's page, say). */
  readonly code: string;
  readonly problem: Problem;
  /** Seconds to wait before sending again, from `Retry-After` (or the body), when the answer gave one. */
  readonly retryAfterSeconds: number | undefined;
  /** The `X-Request-Id` the service answered with, for its logs (a refusal before any turn has none). */
  readonly requestId: string | undefined;

  constructor(problem: Problem, options: { retryAfterSeconds?: number; requestId?: string } = {}) {
    super(problem.detail ?? problem.title);
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.requestId = options.requestId;
  }
}

export function isChatHttpError(value: unknown): value is ChatHttpError {
  return value instanceof ChatHttpError;
}

/** Seconds from a `Retry-After` header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Read a non-2xx response into a {@link ChatHttpError} (never throws while reading it). */
export async function errorFromResponse(response: Response): Promise<ChatHttpError> {
  const text = await response.text().catch(() => "");
  let problem: Problem | undefined;
  try {
    const body: unknown = parseServerJson(text);
    if (body && typeof body === "object" && typeof (body as { code?: unknown }).code === "string") {
      const b = body as Partial<Problem>;
      problem = {
        ...b,
        type: typeof b.type === "string" ? b.type : "about:blank",
        title: typeof b.title === "string" ? b.title : response.statusText,
        status: typeof b.status === "number" ? b.status : response.status,
        code: b.code as string,
      };
    }
  } catch {
    // not JSON: described below
  }
  problem ??= {
    type: "about:blank",
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    code: `http_${response.status}`,
    detail: `The server answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
  };
  const retryAfterSeconds =
    parseRetryAfter(response.headers.get("retry-after")) ??
    (typeof problem.retryAfterSeconds === "number" ? problem.retryAfterSeconds : undefined);
  const requestId = response.headers.get("x-request-id") ?? undefined;
  return new ChatHttpError(problem, {
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    ...(requestId ? { requestId } : {}),
  });
}
