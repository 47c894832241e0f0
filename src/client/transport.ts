import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from "ai";
import {
  type ErrorPayload,
  errorPayloadSchema,
  type FinishPayload,
  finishPayloadSchema,
  type PaymentUpdate,
  paymentUpdateSchema,
  type StreamEvent,
} from "../protocol/stream.js";
import { AwaitingRequests, answerFor, endedUpdate, isFinalRefusal, refusedAnswerStream } from "./answer.js";
import { recentMessages, SERVICE_BOUNDS } from "./bounds.js";
import { eventsToChunks } from "./chunks.js";
import { ChatClient, type ChatClientOptions } from "./client.js";
import { ChatHttpError } from "./errors.js";
import type { ApprovalAnswer, ChatMessage, ChatRequestBody } from "./request.js";
import type { TransportSigner } from "./signer.js";
import { TabClient } from "./tabs.js";
import { openPaymentParts, PaymentToolParts, type PaymentTools } from "./tool-parts.js";
import { TransportTab, type TransportTabOption } from "./transport-tab.js";

/**
 * A `ChatTransport` for the AI SDK's `useChat` (ai 7): each turn is one `POST /api/chat`, and its
 * lines become UI message chunks:
 *
 * - `0:` text -> `text-start`/`text-delta`/`text-end` (a new text part after each payment card, so
 *   text and cards keep their order);
 * - `p:` -> a `data-payment` part whose `id` is the payment id: later updates replace it in place,
 *   so one card follows one payment; with status `awaiting_approval` its data carries `approval`;
 * - `e:` -> a `data-error` part where it happened, and one `error` chunk after the finish (so
 *   `useChat`'s `error` is set without losing the words and metadata that follow an `e:`);
 * - `d:` -> `finish` with the whole `d:` payload as `messageMetadata`.
 *
 * - and, for each payment awaiting the wallet, a `tool-x402_payment` tool part that asks for
 *   approval as the AI SDK's own parts do (src/client/tool-parts.ts).
 *
 * To answer an approval, either call `addToolApprovalResponse({ id, approved })` on the tool part
 * (with `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`): the
 * transport's `signer` signs it, or a decline is sent; or sign it yourself (`signEvmApproval`,
 * `signSolanaApproval`) and call `sendMessage(undefined, { body: { approval } })`. Either way the
 * turn resumes in the same assistant message.
 */

/** The data parts this transport writes: `data-payment` (one per payment id) and `data-error`. */
export type PaymentDataTypes = {
  payment: PaymentUpdate;
  error: ErrorPayload;
};

/** The UI message `useChat` holds with this transport; its metadata is the turn's `d:` payload. */
export type PaymentUIMessage = UIMessage<FinishPayload, PaymentDataTypes, PaymentTools>;

/**
 * The protocol's own schemas for `useChat`'s `dataPartSchemas` and `messageMetadataSchema`, so
 * parts and metadata are validated as they arrive (messages restored from storage too):
 * `useChat({ transport, ...paymentChatSchemas })`.
 */
export const paymentChatSchemas = {
  // The AI SDK looks a part's schema up by its name (`payment`); the `data-` keys are kept for
  // code that reads them by chunk type.
  dataPartSchemas: {
    payment: paymentUpdateSchema,
    error: errorPayloadSchema,
    "data-payment": paymentUpdateSchema,
    "data-error": errorPayloadSchema,
  },
  messageMetadataSchema: finishPayloadSchema,
};

/** Request fields the transport sends besides the messages, from options or `sendMessage`'s `body`. */
export type TurnFields = Omit<ChatRequestBody, "messages">;

export interface PaymentChatTransportOptions extends ChatClientOptions {
  /** A client to use (its options win); otherwise one is made from these options. */
  client?: ChatClient;
  /**
   * Fields of every request (wallet, limits, model...), or a function asked at every request so a
   * page's current settings apply. `sendMessage(..., { body })` fields are laid over them.
   */
  fields?: TurnFields | (() => TurnFields | undefined);
  /** Bounds of the conversation sent (the service's are 100 messages, 64,000 characters). */
  maxMessages?: number;
  maxChars?: number;
  /**
   * Signs approvals answered with `addToolApprovalResponse({ approved: true })`: an EIP-1193
   * provider and/or a Solana signer (`{ evm, solana }`), or a function that answers. Without one,
   * an approved tool part ends in an error, unsigned (declines need no signer).
   */
  signer?: TransportSigner;
  /** Emit the `tool-x402_payment` approval parts (default true); `false` keeps only the data parts. */
  approvalParts?: boolean;
  /**
   * Open a tab before the first turn (transport-tab.ts): one approval part asks the wallet to fund
   * it, and later turns pay from it without asking. A function is asked before each turn (the
   * page's current choice); undefined: no tab.
   */
  tab?: TransportTabOption | (() => TransportTabOption | undefined);
}

/**
 * UI messages -> the service's `{role, content}` messages: each message's text parts joined;
 * messages with no text (a card alone) left out; the oldest dropped until the bounds hold.
 */
export function toServiceMessages(
  messages: ReadonlyArray<Pick<UIMessage, "role" | "parts">>,
  bounds: { maxMessages?: number; maxChars?: number } = {},
): ChatMessage[] {
  const maxMessages = bounds.maxMessages ?? SERVICE_BOUNDS.maxMessages;
  const maxChars = bounds.maxChars ?? SERVICE_BOUNDS.maxChars;
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const content = message.parts
      .flatMap((part) => (part.type === "text" ? [part.text] : []))
      .join("")
      .trim();
    if (content !== "") out.push({ role: message.role, content });
  }
  return recentMessages(out, { maxMessages, maxChars });
}

const TURN_FIELDS = [
  "walletAddress",
  "spendingLimits",
  "approval",
  "tab",
  "model",
  "temperature",
  "maxTokens",
];

function fieldsOf(body: object | undefined): TurnFields {
  if (!body) return {};
  const unknown = Object.keys(body).filter((key) => !TURN_FIELDS.includes(key));
  if (unknown.length > 0)
    throw new TypeError(`unknown request field(s) ${unknown.join(", ")}: expected ${TURN_FIELDS.join(", ")}`);
  return body as TurnFields;
}

export class PaymentChatTransport implements ChatTransport<PaymentUIMessage> {
  private readonly client: ChatClient;
  private readonly options: PaymentChatTransportOptions;
  private readonly requests = new AwaitingRequests();
  /** The tab this transport opened, if any (`tab` option): `tab.state`, `tab.close()`. */
  readonly tab: TransportTab;

  constructor(options: PaymentChatTransportOptions = {}) {
    this.options = options;
    this.client = options.client ?? new ChatClient(options);
    this.tab = new TransportTab(new TabClient(this.client.options));
  }

  async sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      messageId: string | undefined;
      messages: PaymentUIMessage[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const defaults = typeof this.options.fields === "function" ? this.options.fields() : this.options.fields;
    const fields = { ...defaults, ...fieldsOf(options.body) };
    const last = options.messages.at(-1);
    const open =
      this.options.approvalParts === false || last?.role !== "assistant" ? [] : openPaymentParts(last);
    await this.tab.refresh(
      open.map((p) => p.toolCallId),
      options.abortSignal,
    );
    let answered: string | undefined;
    /** The tab's part closed by this request (its funding), before the turn it held up. */
    let before: StreamEvent[] = [];
    if (fields.approval) {
      answered = open.some((p) => p.toolCallId === fields.approval?.paymentId)
        ? fields.approval.paymentId
        : undefined;
    } else {
      const responded = open.find((p) => p.state === "approval-responded");
      if (responded && last) {
        answered = responded.toolCallId;
        const tabFunding = answered === this.tab.asking;
        const outcome = await answerFor(responded, last, this.requests, this.options.signer, tabFunding);
        if ("error" in outcome) return refusedAnswerStream(answered, outcome.error, outcome.retry);
        if (tabFunding) {
          before = await this.tab.answer(outcome.answer, options.abortSignal);
          this.requests.forget(answered);
        } else fields.approval = outcome.answer;
      }
    }
    const ours = this.tab.tokenFor(fields.walletAddress);
    if (fields.tab === undefined && ours) fields.tab = ours;
    const sendsOurs = ours !== undefined && fields.tab === ours;
    if (!answered && !fields.approval && fields.tab === undefined) {
      const asking = await this.askForTab(fields, open, options.abortSignal);
      if (asking) return asking;
    }
    const body: ChatRequestBody = {
      ...fields,
      messages: toServiceMessages(options.messages, {
        ...(this.options.maxMessages ? { maxMessages: this.options.maxMessages } : {}),
        ...(this.options.maxChars ? { maxChars: this.options.maxChars } : {}),
      }),
    };
    const request = {
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    };
    if (before.length > 0) {
      // The tab's part is closed first; the turn it held up follows (an error there ends the stream).
      const tools = new PaymentToolParts(
        open.map((p) => p.toolCallId),
        answered,
      );
      const turn = this.client.chat(body, request);
      return eventsToChunks(this.remembering(then(before, turn), sendsOurs), tools);
    }
    let turn: AsyncIterable<StreamEvent>;
    try {
      turn = await this.client.chat(body, request);
    } catch (error) {
      // A refused answer: its tool part asks again while the payment waits, else ends (refusedAnswerStream).
      if (!answered || !last || options.abortSignal?.aborted || (error as Error)?.name === "AbortError")
        throw error;
      const http = error instanceof ChatHttpError;
      const text = http
        ? `${error.message} (${error.code})`
        : `The service's reply did not arrive (${String((error as Error)?.message ?? error)}); approving again is safe: one payment is never paid twice.`;
      const known = this.requests.find(answered, last);
      if (!http || !isFinalRefusal(error.code)) return refusedAnswerStream(answered, text, known);
      const ended = known && endedUpdate(known, error.code, error.problem);
      return refusedAnswerStream(answered, text, undefined, ended);
    }
    if (answered) this.requests.forget(answered);
    if (this.options.approvalParts === false) return eventsToChunks(turn);
    const tools = new PaymentToolParts(
      open.map((p) => p.toolCallId),
      answered,
    );
    return eventsToChunks(this.remembering(turn, sendsOurs), tools);
  }

  /**
   * The events as they are, each request awaiting approval remembered on its way (for the signer);
   * the transport's tab, when this turn sent its token and the service no longer takes it
   * (`tab_invalid`: it ended), is forgotten, so the next turn asks again.
   */
  private async *remembering(
    events: AsyncIterable<StreamEvent>,
    sentTab = false,
  ): AsyncGenerator<StreamEvent> {
    for await (const event of events) {
      if (event.type === "payment") this.requests.remember(event.payment);
      if (sentTab && event.type === "error" && event.error.code === "tab_invalid") this.tab.forget();
      yield event;
    }
  }

  /** A turn that only asks the wallet to fund the tab, when one is wanted and none is open. */
  private async askForTab(
    fields: TurnFields,
    open: { toolCallId: string }[],
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<UIMessageChunk> | undefined> {
    const want = typeof this.options.tab === "function" ? this.options.tab() : this.options.tab;
    if (!want || !fields.walletAddress || this.options.approvalParts === false || !this.tab.mayAsk)
      return undefined;
    const asked = await this.tab.ask(want, fields.walletAddress, signal);
    if (!asked) return undefined;
    this.requests.remember(asked.update);
    const tools = new PaymentToolParts(open.map((p) => p.toolCallId));
    return eventsToChunks(then(asked.events), tools);
  }

  /** The service keeps no stream to reconnect to: a dropped turn is not resumable. */
  async reconnectToStream(): Promise<ReadableStream<UIMessageChunk> | null> {
    return null;
  }
}

/** `first`'s events, then (once they are out) those of `rest`. */
async function* then(
  first: StreamEvent[],
  rest?: Promise<AsyncIterable<StreamEvent>>,
): AsyncGenerator<StreamEvent> {
  yield* first;
  if (rest) yield* await rest;
}

/** The body option that resumes a turn with the wallet's answer: `sendMessage(undefined, approvalBody(answer))`. */
export function approvalBody(answer: ApprovalAnswer): { body: { approval: ApprovalAnswer } } {
  return { body: { approval: answer } };
}

export { eventsToChunks };
