/**
 * A React page's `useChat` over the packed client's transport, as a project with the current AI SDK
 * (`ai` 7, `@ai-sdk/react` 4) writes it (test/client/pack.test.ts type-checks it, not run): every
 * payment is a tool part, answered with `addToolApprovalResponse`.
 */
import { useChat } from "@ai-sdk/react";
import { PaymentChatTransport, type PaymentUIMessage, paymentChatSchemas } from "@x402-chat-agent/client/ai";
import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";

const transport = new PaymentChatTransport({ baseUrl: "http://127.0.0.1:3000" });

export function usePaymentTrail(): { lines: string[]; approve(id: string): void } {
  const { messages, addToolApprovalResponse } = useChat<PaymentUIMessage>({
    transport,
    ...paymentChatSchemas,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const lines = messages.flatMap((message) =>
    message.parts.flatMap((part) => {
      if (!isToolUIPart(part) || part.type !== "tool-x402_payment") return [];
      const reason = part.approval?.reason ?? "";
      return [
        `${part.input?.service?.url ?? ""} ${part.state} ${part.approval?.isAutomatic ? "auto" : "user"} ${reason}`,
      ];
    }),
  );
  return { lines, approve: (id) => void addToolApprovalResponse({ id, approved: true }) };
}
