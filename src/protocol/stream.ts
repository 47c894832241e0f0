import { cleanUntrusted, withoutUnsafe } from "./content.js";
import type { StreamEvent } from "./events.js";
import type { ProtocolSchema } from "./schema-type.js";
import {
  errorPayloadSchema,
  finishPayloadSchema,
  paymentUpdateSchema,
  textPayloadSchema,
} from "./schemas.js";

/**
 * The chat stream protocol (docs/protocol.md, "Response stream"), defined once: its payloads' types (events.ts) and
 * schemas (schemas.ts), re-exported here, the encoder and a streaming decoder. Each line is `<prefix>:<JSON>\n`:
 *   0: text delta (JSON string)   p: payment update   e: error   d: finish metadata (exactly once, last)
 * Over SSE each line travels as one event: `data: <line>\n\n`, with `: ping` comment heartbeats.
 */

/** Sent as the `X-Chat-Protocol` response header; bump when a line's meaning changes. */
export const PROTOCOL_VERSION = "1";
export const PROTOCOL_HEADER = "X-Chat-Protocol";

export {
  type ApprovalRequest,
  type BudgetMeter,
  type ErrorPayload,
  type EvmTypedData,
  type FinishPayload,
  type LimitMeter,
  type Money,
  PAYMENT_STATUSES,
  type PaymentAmount,
  type PaymentStatus,
  type PaymentSummary,
  type PaymentUpdate,
  type StreamEvent,
  type TabMeter,
  type WalletRequest,
} from "./events.js";
export type { ProtocolSchema, SchemaIssue } from "./schema-type.js";
export {
  approvalRequestSchema,
  budgetMeterSchema,
  errorPayloadSchema,
  finishPayloadSchema,
  paymentSummarySchema,
  paymentUpdateSchema,
  walletRequestSchema,
} from "./schemas.js";

const PREFIX = { text: "0", payment: "p", error: "e", finish: "d" } as const;

/**
 * Encode one event as a protocol line, newline included. Whatever reached it from outside (a
 * model's words, a service's refusal) goes out without the characters that hide or reorder text
 * or drive a terminal (content.ts): a client shows what the line says.
 */
export function encodeLine(event: StreamEvent): string {
  switch (event.type) {
    case "text":
      return `${PREFIX.text}:${JSON.stringify(withoutUnsafe(event.text))}\n`;
    case "payment":
      return `${PREFIX.payment}:${JSON.stringify(cleanUntrusted(event.payment).value)}\n`;
    case "error":
      return `${PREFIX.error}:${JSON.stringify(cleanUntrusted(event.error).value)}\n`;
    case "finish":
      return `${PREFIX.finish}:${JSON.stringify(event.finish)}\n`;
  }
}

export type Framing = "sse" | "lines";

/** Wrap a protocol line for the chosen framing. JSON never contains a raw newline, so one line is one SSE event. */
export function frame(line: string, framing: Framing): string {
  return framing === "sse" ? `data: ${line.slice(0, -1)}\n\n` : line;
}

/** An SSE comment, sent while idle so proxies keep the connection open. Bare lines get nothing. */
export const SSE_HEARTBEAT = ": ping\n\n";

export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/**
 * The longest line a decoder holds while it waits for the newline (characters). The service's own
 * are far shorter (text parts at most 256k characters); past this a server is broken or hostile.
 */
export const MAX_LINE_CHARS = 4_000_000;

/**
 * `JSON.parse` for what a server sends: an own `__proto__` key (which a schema's copy would turn
 * into the parsed object's prototype, so its fields would be read unchecked) is dropped.
 */
export function parseServerJson(text: string): unknown {
  return text.includes("__proto__") ? JSON.parse(text, withoutProto) : JSON.parse(text);
}

function withoutProto(key: string, value: unknown): unknown {
  return key === "__proto__" ? undefined : value;
}

/** Decode one protocol line (without its newline). Throws ProtocolError on anything malformed. */
export function decodeLine(line: string): StreamEvent {
  const colon = line.indexOf(":");
  if (colon !== 1) throw new ProtocolError(`not a protocol line: ${line.slice(0, 40)}`);
  let json: unknown;
  try {
    json = parseServerJson(line.slice(2));
  } catch {
    throw new ProtocolError(`line payload is not JSON: ${line.slice(0, 40)}`);
  }
  const parse = <T>(schema: ProtocolSchema<T>): T => {
    const result = schema.safeParse(json);
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const where = issue?.path.map(String).join(".") || "(payload)";
    throw new ProtocolError(`bad ${line[0]}: payload at ${where}: ${issue?.message}`);
  };
  switch (line[0]) {
    case PREFIX.text:
      return { type: "text", text: parse(textPayloadSchema) };
    case PREFIX.payment:
      return { type: "payment", payment: parse(paymentUpdateSchema) };
    case PREFIX.error:
      return { type: "error", error: parse(errorPayloadSchema) };
    case PREFIX.finish:
      return { type: "finish", finish: parse(finishPayloadSchema) };
    default:
      throw new ProtocolError(`unknown line prefix: ${line[0]}`);
  }
}

/**
 * A streaming decoder for either framing: feed it text chunks split anywhere, get events.
 * SSE `data: ` prefixes, blank lines and `:` comments are understood, so one decoder reads both.
 */
export class StreamDecoder {
  private buffer = "";

  /**
   * Feed a chunk; returns the events completed by it. Only the new chunk is searched for newlines
   * (a long line fed in pieces costs its length once), and a line past MAX_LINE_CHARS throws.
   */
  push(chunk: string): StreamEvent[] {
    const events: StreamEvent[] = [];
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      const raw = (this.buffer + chunk.slice(start, newline)).replace(/\r$/, "");
      this.buffer = "";
      start = newline + 1;
      const event = this.decodeRaw(raw);
      if (event) events.push(event);
    }
    this.buffer += chunk.slice(start);
    if (this.buffer.length > MAX_LINE_CHARS) {
      this.buffer = "";
      throw new ProtocolError(`a line longer than ${MAX_LINE_CHARS} characters`);
    }
    return events;
  }

  /** Call at the end of input; throws when a partial line is left over. */
  end(): StreamEvent[] {
    const rest = this.buffer;
    this.buffer = "";
    if (rest.trim() === "") return [];
    const event = this.decodeRaw(rest);
    return event ? [event] : [];
  }

  private decodeRaw(raw: string): StreamEvent | undefined {
    if (raw === "" || raw.startsWith(":")) return undefined;
    if (raw.startsWith("data:")) return decodeLine(raw.slice(raw.startsWith("data: ") ? 6 : 5));
    return decodeLine(raw);
  }
}

/** Decode a whole byte stream (a fetch Response body) into events, in order. Works in browsers too. */
export async function* decodeStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new StreamDecoder();
  const text = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* decoder.push(text.decode(value, { stream: true }));
    }
    yield* decoder.push(text.decode());
    yield* decoder.end();
  } finally {
    reader.releaseLock();
  }
}
