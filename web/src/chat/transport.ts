import type { ChatRequestOptions, ChatTransport, UIMessageChunk } from "ai";
import { decodeStream } from "../../../src/protocol/stream.js";
import type { ChatMessage } from "./types.js";

/**
 * A refusal before the stream opened: the service's problem+json body (docs/protocol.md, "Errors
 * before the stream"), kept whole so the page can show its code and detail where they belong.
 */
export class ChatRefusedError extends Error {
  override name = "ChatRefusedError";
  constructor(
    readonly status: number,
    readonly code: string,
    readonly problem: Record<string, unknown>,
  ) {
    super(typeof problem.detail === "string" ? problem.detail : `HTTP ${status}`);
  }
}

async function refusal(response: Response): Promise<ChatRefusedError> {
  const text = await response.text().catch(() => "");
  let problem: Record<string, unknown> = { detail: `The server answered HTTP ${response.status}.` };
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === "object") problem = body as Record<string, unknown>;
  } catch {
    // not problem+json (a proxy's page): the status says it
  }
  const code = typeof problem.code === "string" ? problem.code : `http_${response.status}`;
  return new ChatRefusedError(response.status, code, problem);
}

/** The conversation as the protocol takes it: role and plain text (payment cards are not sent back). */
export function toProtocolMessages(messages: ChatMessage[]): Array<{ role: string; content: string }> {
  const out = messages
    .map((m) => ({
      role: m.role,
      content: m.parts
        .flatMap((p) => (p.type === "text" ? [p.text] : []))
        .join("")
        .trim(),
    }))
    .filter((m) => m.content !== "");
  return out;
}

/**
 * A `useChat` transport over the service's line protocol, for the page. It maps text lines to text
 * parts, each `p:` to a `data-payment` part keyed by payment id (so its card updates in place), each
 * `e:` to a `data-error` part, and `d:` to the message's metadata. `body` of a request carries the
 * settings (`walletAddress`, `spendingLimits`, `model`...) and, to resume, `approval`.
 */
export class LineProtocolTransport implements ChatTransport<ChatMessage> {
  constructor(private readonly options: { api?: string; fetch?: typeof fetch } = {}) {}

  async sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      messageId: string | undefined;
      messages: ChatMessage[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { token, ...rest } = (options.body ?? {}) as Record<string, unknown>;
    const headers: Record<string, string> = {
      "Content-Type": "application/json",
      ...(typeof token === "string" && token ? { Authorization: `Bearer ${token}` } : {}),
      ...(options.headers instanceof Headers
        ? Object.fromEntries(options.headers.entries())
        : (options.headers as Record<string, string> | undefined)),
    };
    const response = await (this.options.fetch ?? fetch)(this.options.api ?? "/api/chat", {
      method: "POST",
      headers,
      body: JSON.stringify({ messages: toProtocolMessages(options.messages), ...rest }),
      signal: options.abortSignal ?? null,
    });
    if (!response.ok || !response.body) throw await refusal(response);
    return toChunks(decodeStream(response.body));
  }

  async reconnectToStream(): Promise<ReadableStream<UIMessageChunk> | null> {
    return null;
  }
}

function toChunks(events: ReturnType<typeof decodeStream>): ReadableStream<UIMessageChunk> {
  let textId: string | undefined;
  let parts = 0;
  return new ReadableStream<UIMessageChunk>({
    async start(controller) {
      const closeText = () => {
        if (textId) controller.enqueue({ type: "text-end", id: textId });
        textId = undefined;
      };
      try {
        controller.enqueue({ type: "start" });
        for await (const event of events) {
          switch (event.type) {
            case "text":
              if (!textId) {
                textId = `text-${++parts}`;
                controller.enqueue({ type: "text-start", id: textId });
              }
              controller.enqueue({ type: "text-delta", id: textId, delta: event.text });
              break;
            case "payment":
              closeText();
              controller.enqueue({ type: "data-payment", id: event.payment.paymentId, data: event.payment });
              break;
            case "error":
              closeText();
              controller.enqueue({ type: "data-error", id: `error-${++parts}`, data: event.error });
              break;
            case "finish":
              closeText();
              controller.enqueue({ type: "finish", messageMetadata: event.finish });
              break;
          }
        }
        closeText();
        controller.close();
      } catch (error) {
        controller.error(error);
      }
    },
  });
}

/** The transport the page uses. */
export function createTransport(): ChatTransport<ChatMessage> {
  return new LineProtocolTransport();
}

/** An error for people: a refusal's code and detail, or the error's message. */
export function describeError(error: unknown): string {
  if (error instanceof ChatRefusedError) {
    const retry =
      typeof error.problem.retryAfterSeconds === "number"
        ? ` Try again in ${error.problem.retryAfterSeconds} s.`
        : "";
    return `${error.message} (${error.code})${retry}`;
  }
  return error instanceof Error ? error.message : String(error);
}
