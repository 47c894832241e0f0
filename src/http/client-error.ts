import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { RequestError } from "@hono/node-server";
import { AppError } from "../errors/index.js";
import { problemBody, problemResponse } from "./problem.js";

/**
 * Requests Node's HTTP parser refuses never reach the app (bad chunked framing, Content-Length
 * with Transfer-Encoding, a NUL in a header, headers over the size limit...). Node would answer a
 * bare 400 or 431 without a body; this answers the same problem+json as every other 4xx, on the
 * server's `clientError` event, then closes the connection. So do the two requests Node answers
 * itself before the app: `CONNECT` (the `connect` event; Node would just close the connection)
 * and an `Expect` other than `100-continue` (the `checkExpectation` event; Node would send a bare 417).
 * Two more never reach the app through the Node adapter: an HTTP/1.1 request without `Host`, and a
 * target or `Host` it cannot make a URL of (a backslash in the path, `*`, a port past 65535, a
 * space in the host...); both get the same problem+json.
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
  405: "Method Not Allowed",
  408: "Request Timeout",
  417: "Expectation Failed",
  431: "Request Header Fields Too Large",
};

/** The methods this server answers (the `Allow` of a refused `CONNECT`). */
const ALLOWED_METHODS = "GET, HEAD, POST";

/** The headers of a problem answered outside the app: problem+json, its length, and a closed connection. */
function problemHeaders(body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    "Content-Type": "application/problem+json",
    "X-Content-Type-Options": "nosniff",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
    Connection: "close",
    ...extra,
  };
}

/** The raw HTTP/1.1 response for a refused request: problem+json, its length, and a closed connection. */
export function clientErrorResponse(code: string | undefined): string {
  return rawProblem(errorFor(code));
}

function rawProblem(error: AppError, extra: Record<string, string> = {}): string {
  const body = JSON.stringify(problemBody(error));
  const headers = Object.entries(problemHeaders(body, extra)).map(([name, value]) => `${name}: ${value}`);
  return [
    `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? "Bad Request"}`,
    ...headers,
    "",
    body,
  ].join("\r\n");
}

/** The `connect` listener: this server is no proxy; a `CONNECT` gets 405 problem+json, then a close. */
export function onConnect(_request: IncomingMessage, socket: Duplex): void {
  const error = new AppError("method_not_allowed", `CONNECT is not supported; use ${ALLOWED_METHODS}.`);
  answerRaw(socket, rawProblem(error, { Allow: ALLOWED_METHODS }));
}

/** The `checkExpectation` listener: an `Expect` this server cannot meet gets 417 problem+json. */
export function onCheckExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const error = new AppError(
    "expectation_failed",
    "The only Expect this server meets is 100-continue; send the request without it.",
  );
  const body = JSON.stringify(problemBody(error));
  response.writeHead(error.status, problemHeaders(body));
  response.end(body);
}

function answerRaw(socket: Duplex, answer: string): void {
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return;
  }
  try {
    socket.end(answer, () => socket.destroy());
  } catch {
    socket.destroy();
  }
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
  answerRaw(socket, clientErrorResponse(error.code));
}

/**
 * The adapter's error handler: a request whose target or `Host` makes no URL is 400
 * `malformed_request`; anything else thrown outside the app (which answers its own errors) is a
 * 500 `internal` problem, never a bare status.
 */
export function onUnreadableTarget(error: unknown): Response {
  if (error instanceof RequestError) {
    return problemResponse(
      new AppError(
        "malformed_request",
        "The request's target or Host header is not a URL this server can read (RFC 9112, 3.2).",
      ),
      { "Cache-Control": "no-store" },
    );
  }
  return problemResponse(new AppError("internal", "The request could not be handled."), {
    "Cache-Control": "no-store",
  });
}

/**
 * An HTTP/1.1 request without `Host`, or any request with two, is 400 problem+json (RFC 9112,
 * 3.2; Node answers the first with no body, and keeps only the first of two).
 */
export function withHostRequired(listener: RequestListener): RequestListener {
  return (request, response) => {
    const http11 = request.httpVersionMajor === 1 && request.httpVersionMinor >= 1;
    const hosts = request.headersDistinct.host?.length ?? 0;
    if (hosts === 1 || (hosts === 0 && !http11)) {
      listener(request, response);
      return;
    }
    const error = new AppError(
      "malformed_request",
      hosts === 0
        ? "An HTTP/1.1 request needs a Host header (RFC 9112, 3.2)."
        : "A request carries one Host header, not several (RFC 9112, 3.2).",
    );
    const body = JSON.stringify(problemBody(error));
    response.shouldKeepAlive = false;
    response.writeHead(error.status, problemHeaders(body));
    response.end(body);
  };
}
