import type { Duplex } from "node:stream";
import { AppError } from "../errors/index.js";
import { problemBody } from "./problem.js";

/**
 * Requests Node's HTTP parser refuses never reach the app (bad chunked framing, Content-Length
 * with Transfer-Encoding, a NUL in a header, headers over the size limit...). Node would answer a
 * bare 400 or 431 without a body; this answers the same problem+json as every other 4xx, on the
 * server's `clientError` event, then closes the connection.
 */

/** The parser's error codes that have a status of their own; every other parse error is a 400. */
function errorFor(code: string | undefined): AppError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new AppError(
        "headers_too_large",
        "The request's header section is larger than this server accepts (16 KiB in all).",
      );
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return new AppError("request_timeout", "The request was not received in time.");
    default:
      return new AppError(
        "malformed_request",
        "The HTTP request could not be parsed (framing, header syntax or characters).",
        { details: code ? { parserCode: code } : {} },
      );
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

/** The raw HTTP/1.1 response for a refused request: problem+json, its length, and a closed connection. */
export function clientErrorResponse(code: string | undefined): string {
  const error = errorFor(code);
  const body = JSON.stringify(problemBody(error));
  return [
    `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? "Bad Request"}`,
    "Content-Type: application/problem+json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/** Whether a response to this socket has already started: then nothing more may be written to it. */
function responseStarted(socket: Duplex): boolean {
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}

/** The `clientError` listener: answer when the socket can still take an answer, then close it. */
export function onClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A peer that reset or vanished has nobody left to read an answer.
  if (error.code === "ECONNRESET" || !socket.writable || socket.destroyed || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  try {
    socket.end(clientErrorResponse(error.code), () => socket.destroy());
  } catch {
    socket.destroy();
  }
}
