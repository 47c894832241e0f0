import { z } from "zod/v4";
import { FINISH_REASONS } from "../errors/index.js";

/**
 * The chat stream protocol (docs/protocol.md, "Response stream"), defined once: payload schemas, the encoder and a
 * streaming decoder. Each line is `<prefix>:<JSON>\n`:
 *   0: text delta (JSON string)   p: payment update   e: error   d: finish metadata (exactly once, last)
 * Over SSE each line travels as one event: `data: <line>\n\n`, with `: ping` comment heartbeats.
 */

/** Sent as the `X-Chat-Protocol` response header; bump when a line's meaning changes. */
export const PROTOCOL_VERSION = "1";
export const PROTOCOL_HEADER = "X-Chat-Protocol";

/** The states a payment goes through (docs/payments.md has the transitions). */
export const PAYMENT_STATUSES = [
  "quoted",
  "refused",
  "reserved",
  "signed",
  "submitted",
  "settled",
  "failed",
  "unknown",
  "released",
  "awaiting_approval",
  "rejected",
  "expired",
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** An amount both ways: atomic units as a decimal string, and plain USD ("0.01"). */
const moneySchema = z.object({ atomic: z.string().regex(/^[0-9]+$/), usd: z.string() });
export type Money = z.infer<typeof moneySchema>;

/**
 * One spending limit as it stands: its amount, what counts as spent (settled, or unclear and
 * possibly gone), what is pending (reserved, signed, submitted), what remains, and, while a payment
 * is quoted or awaits approval, what would remain after paying it. `remaining` never goes below 0.
 */
const limitMeterSchema = z.looseObject({
  limit: moneySchema,
  spent: moneySchema,
  pending: moneySchema,
  remaining: moneySchema,
  remainingAfter: moneySchema.optional(),
});
export type LimitMeter = z.infer<typeof limitMeterSchema>;

/** The live budget meter every `p:` update carries from the quote on: draw it as it is. */
export const budgetMeterSchema = z.looseObject({
  perTransaction: limitMeterSchema,
  perRequest: limitMeterSchema,
  daily: limitMeterSchema,
});
export type BudgetMeter = z.infer<typeof budgetMeterSchema>;

/**
 * What the user's wallet must sign to approve a payment (docs/protocol.md, "Approval"): for EVM the
 * EIP-712 typed data of an EIP-3009 `TransferWithAuthorization` exactly as `eth_signTypedData_v4`
 * takes it (uint256 values as decimal strings); for Solana the transaction, base64, for a Wallet
 * Standard `signTransaction` (the facilitator is its fee payer and signs last).
 */
export const walletRequestSchema = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("evm-typed-data"),
    method: z.literal("eth_signTypedData_v4"),
    typedData: z.looseObject({
      domain: z.record(z.string(), z.unknown()),
      types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
      primaryType: z.string(),
      message: z.record(z.string(), z.unknown()),
    }),
  }),
  z.looseObject({
    kind: z.literal("solana-transaction"),
    method: z.literal("signTransaction"),
    /** The wire transaction, base64, with empty signature slots. */
    transaction: z.string(),
  }),
]);
export type WalletRequest = z.infer<typeof walletRequestSchema>;

export const approvalRequestSchema = z.looseObject({
  /** The wallet that must sign (the request's `walletAddress`). */
  wallet: z.string(),
  /** ISO-8601: after this the signature can no longer be used (the authorization's window, or the Solana blockhash's life). */
  expiresAt: z.string(),
  /** How to resume: send `approval` with this payment id in the next `POST /api/chat`. */
  sign: walletRequestSchema,
});
export type ApprovalRequest = z.infer<typeof approvalRequestSchema>;

const amountSchema = z.object({
  /** Atomic units of the token, as a decimal string (bigint on the server). */
  atomic: z.string().regex(/^[0-9]+$/),
  /** The same amount in USD, plain decimal string ("0.01"). */
  usd: z.string(),
  asset: z.string().optional(),
});

export const paymentUpdateSchema = z.looseObject({
  paymentId: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  service: z.looseObject({ url: z.string(), name: z.string().optional() }),
  amount: amountSchema.optional(),
  network: z.string().optional(),
  payTo: z.string().optional(),
  transaction: z.string().optional(),
  payer: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  /** The budget as it stands, on every update from the quote on. */
  budget: budgetMeterSchema.optional(),
  /** Only with status `awaiting_approval`: what the wallet signs, and until when. */
  approval: approvalRequestSchema.optional(),
});
export type PaymentUpdate = z.infer<typeof paymentUpdateSchema>;

export const errorPayloadSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
});
export type ErrorPayload = z.infer<typeof errorPayloadSchema>;

export const paymentSummarySchema = z.looseObject({
  paymentId: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  service: z.string(),
  amountUsd: z.string().optional(),
  network: z.string().optional(),
  transaction: z.string().optional(),
});
export type PaymentSummary = z.infer<typeof paymentSummarySchema>;

export const finishPayloadSchema = z.looseObject({
  finishReason: z.enum(FINISH_REASONS),
  /** The last settled payment's transaction, when the turn paid anything. */
  transactionHash: z.string().optional(),
  transactions: z.array(z.string()),
  payments: z.array(paymentSummarySchema),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() }),
  /** The public model alias the client asked for. */
  model: z.string(),
  /** Which provider actually served the turn ("offline", "google", "openai-compatible"). */
  provider: z.string(),
  /** The provider's own model id. */
  modelId: z.string(),
  /** With finish reason `approval-required`: the payments waiting for the user's wallet, oldest first. */
  approvals: z.array(z.looseObject({ paymentId: z.string(), expiresAt: z.string() })).optional(),
});
export type FinishPayload = z.infer<typeof finishPayloadSchema>;

export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "payment"; payment: PaymentUpdate }
  | { type: "error"; error: ErrorPayload }
  | { type: "finish"; finish: FinishPayload };

const PREFIX = { text: "0", payment: "p", error: "e", finish: "d" } as const;

/** Encode one event as a protocol line, newline included. */
export function encodeLine(event: StreamEvent): string {
  switch (event.type) {
    case "text":
      return `${PREFIX.text}:${JSON.stringify(event.text)}\n`;
    case "payment":
      return `${PREFIX.payment}:${JSON.stringify(event.payment)}\n`;
    case "error":
      return `${PREFIX.error}:${JSON.stringify(event.error)}\n`;
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

/** Decode one protocol line (without its newline). Throws ProtocolError on anything malformed. */
export function decodeLine(line: string): StreamEvent {
  const colon = line.indexOf(":");
  if (colon !== 1) throw new ProtocolError(`not a protocol line: ${line.slice(0, 40)}`);
  let json: unknown;
  try {
    json = JSON.parse(line.slice(2));
  } catch {
    throw new ProtocolError(`line payload is not JSON: ${line.slice(0, 40)}`);
  }
  const parse = <T>(schema: z.ZodType<T>): T => {
    const result = schema.safeParse(json);
    if (!result.success)
      throw new ProtocolError(`bad ${line[0]}: payload: ${result.error.issues[0]?.message}`);
    return result.data;
  };
  switch (line[0]) {
    case PREFIX.text:
      return { type: "text", text: parse(z.string()) };
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

  /** Feed a chunk; returns the events completed by it. */
  push(chunk: string): StreamEvent[] {
    this.buffer += chunk;
    const events: StreamEvent[] = [];
    let newline = this.buffer.indexOf("\n");
    while (newline !== -1) {
      const raw = this.buffer.slice(0, newline).replace(/\r$/, "");
      this.buffer = this.buffer.slice(newline + 1);
      const event = this.decodeRaw(raw);
      if (event) events.push(event);
      newline = this.buffer.indexOf("\n");
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
