import { type AppError, ERROR_CODES, type ErrorCode } from "../errors/index.js";

/**
 * RFC 9457 problem details. Every error answered before a stream starts uses this body, with a
 * stable `code` (see errors/index.ts) and, for validation errors, the list of field `errors`.
 */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: { path: string; message: string }[];
  [extension: string]: unknown;
}

export const PROBLEM_TYPE_BASE = "https://x402-chat-agent.dev/problems/";

export function problemBody(error: AppError): ProblemBody {
  const info = ERROR_CODES[error.code];
  return {
    ...error.details,
    type: `${PROBLEM_TYPE_BASE}${error.code.replaceAll("_", "-")}`,
    title: info.title,
    status: info.status,
    detail: error.message,
    code: error.code,
    ...(error.fields ? { errors: error.fields } : {}),
  };
}

/** The problem+json response; codes for outages that pass carry `Retry-After` (from the code table). */
export function problemResponse(error: AppError, headers: Record<string, string> = {}): Response {
  const retryAfter = error.retryAfterS;
  return new Response(JSON.stringify(problemBody(error)), {
    status: error.status,
    headers: {
      "Content-Type": "application/problem+json",
      "X-Content-Type-Options": "nosniff",
      ...(retryAfter !== undefined ? { "Retry-After": String(retryAfter) } : {}),
      ...headers,
    },
  });
}
