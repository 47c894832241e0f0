import { ERROR_CODES, type ErrorCode } from "../errors/index.js";
import {
  cleanUntrusted,
  encodeLine,
  type FinishPayload,
  type Framing,
  frame,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  type StreamEvent,
  withoutUnsafe,
} from "../protocol/index.js";

/**
 * How a chat answer is framed (docs/protocol.md): a stream of lines, the same as SSE events, or
 * one JSON object for programs; and a stored outcome sent again in whichever the replay asks for.
 */

export type Mode = Framing | "json";

/** Pick the response mode from Accept: SSE, one JSON object (programs), else bare lines. */
export function chooseMode(accept: string | undefined): Mode {
  if (accept === undefined || accept === "*/*") return "lines";
  // A type the client gives q=0 is one it does not take (RFC 9110, 12.4.2).
  const refused = (params: string[]) => params.some((p) => /^\s*q\s*=\s*0(\.0{0,3})?\s*$/i.test(p));
  const types = accept
    .split(",")
    .map((part) => part.split(";"))
    .filter(([, ...params]) => !refused(params))
    .map(([type]) => type?.trim().toLowerCase());
  if (types.includes("text/event-stream")) return "sse";
  if (types.includes("application/json") && !types.includes("text/plain")) return "json";
  return "lines";
}

/** The headers of a streamed answer, in the order they were always sent. */
export function streamHeaders(requestId: string, mode: Framing): Record<string, string> {
  const headers: Record<string, string> = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    [PROTOCOL_HEADER]: PROTOCOL_VERSION,
    "X-Request-Id": requestId,
    "Content-Type": mode === "sse" ? "text/event-stream; charset=utf-8" : "text/plain; charset=utf-8",
  };
  // No Connection header: the server keeps the connection or closes it as the request asked.
  return headers;
}

/** Send a stored outcome again, in the framing this request asked for; nothing runs twice. */
export async function replay(stored: unknown, mode: Mode): Promise<Response> {
  const events = ((stored as { events?: StreamEvent[] } | null)?.events ?? []) as StreamEvent[];
  const headers = {
    "Cache-Control": "no-cache",
    [PROTOCOL_HEADER]: PROTOCOL_VERSION,
    "Idempotent-Replayed": "true",
  };
  if (mode === "json") {
    return jsonResponse(async (emit) => {
      for (const e of events) emit(e);
      const finish = events.find((e) => e.type === "finish");
      if (finish?.type !== "finish") throw new Error("stored outcome has no finish");
      return finish.finish;
    }, headers);
  }
  const body = events.map((e) => frame(encodeLine(e), mode)).join("");
  return new Response(body, {
    headers: {
      ...headers,
      "Content-Type": mode === "sse" ? "text/event-stream; charset=utf-8" : "text/plain; charset=utf-8",
    },
  });
}

/**
 * Non-streaming mode for programs (`Accept: application/json`): run the whole turn, then answer one
 * JSON object whose status follows docs/protocol.md#accept-applicationjson (402, 403, 500, 503, ... else
 * 200). It answers
 * as soon as the turn's last line is out (`ended`), not after the bookkeeping that follows.
 */
export async function jsonResponse(
  run: (emit: (event: StreamEvent) => void, ended: () => void) => Promise<FinishPayload>,
  headers: Record<string, string>,
): Promise<Response> {
  let text = "";
  const payments: unknown[] = [];
  const errors: { code: string; message: string }[] = [];
  let finish: FinishPayload | undefined;
  let ended!: () => void;
  const lastLine = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const result = run((event) => {
    if (event.type === "text") text += event.text;
    else if (event.type === "payment") payments.push(event.payment);
    else if (event.type === "error") errors.push(event.error);
    else if (event.type === "finish") finish = event.finish;
  }, ended);
  result.catch(() => {}); // awaited below; a failure after the last line is logged by `run`
  await Promise.race([result, lastLine]);
  finish ??= await result;
  // The error the turn ends with, as `d:` names it (a refusal made good is not it); else 200. An
  // outcome stored before `d:` named it: the last error of the finish reason `d:` gives.
  const standing =
    finish?.errorCode ?? errors.findLast((e) => finishReasonOf(e.code) === finish?.finishReason)?.code;
  const status = standing ? statusForCode(standing) : 200;
  // As the stream's lines are (encodeLine): nothing that hides or reorders text or drives a terminal.
  const said = cleanUntrusted({ payments, errors }).value;
  return new Response(JSON.stringify({ text: withoutUnsafe(text), ...said, finish }), {
    status,
    headers: { ...headers, "Content-Type": "application/json" },
  });
}

function statusForCode(code: string): number {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode].status : 500;
}

function finishReasonOf(code: string): string | undefined {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode].finishReason : undefined;
}
