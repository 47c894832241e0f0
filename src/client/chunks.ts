import type { FinishReason as UIFinishReason, UIMessageChunk } from "ai";
import type { ErrorPayload, FinishPayload, StreamEvent } from "../protocol/stream.js";
import type { PaymentToolParts } from "./tool-parts.js";

/** Protocol events -> the AI SDK's UI message chunks (the mapping src/client/transport.ts describes). */

/** The AI SDK's finish reason for ours (the exact one is in `messageMetadata.finishReason`). */
function uiFinishReason(reason: FinishPayload["finishReason"]): UIFinishReason {
  if (reason === "stop" || reason === "payment-complete") return "stop";
  if (reason === "error") return "error";
  return "other";
}

/** Map protocol events to UI message chunks (exported for other event sources and tests). */
export function eventsToChunks(
  events: AsyncIterable<StreamEvent>,
  tools?: PaymentToolParts,
): ReadableStream<UIMessageChunk> {
  const iterator = events[Symbol.asyncIterator]();
  let textId: string | undefined;
  let parts = 0;
  let errors = 0;
  let lastError: ErrorPayload | undefined;
  let started = false;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      const closeText = () => {
        if (textId) controller.enqueue({ type: "text-end", id: textId });
        textId = undefined;
      };
      if (!started) {
        started = true;
        controller.enqueue({ type: "start" });
      }
      const next = await iterator.next();
      if (next.done) {
        closeText();
        controller.close();
        return;
      }
      const event = next.value;
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
          for (const chunk of tools?.update(event.payment) ?? []) controller.enqueue(chunk);
          break;
        case "error":
          closeText();
          lastError = event.error;
          controller.enqueue({ type: "data-error", id: `error-${++errors}`, data: event.error });
          break;
        case "finish":
          closeText();
          for (const chunk of tools?.finish() ?? []) controller.enqueue(chunk);
          controller.enqueue({
            type: "finish",
            finishReason: uiFinishReason(event.finish.finishReason),
            // A resumed turn's metadata is merged over the stopped turn's: say there is no approval left.
            messageMetadata: { ...event.finish, approvals: event.finish.approvals ?? [] },
          });
          if (lastError) controller.enqueue({ type: "error", errorText: lastError.message });
          break;
      }
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}
