/**
 * A page another site would write (test/browser/cors.test.ts serves it from its own origin): React
 * and `useChat` over the SDK's `PaymentChatTransport`, imported from the client package as another
 * project installs it (`@x402-chat-agent/client`: packages/client/dist, the files `npm pack` ships), calling the service at another origin, with
 * the input usable again after an error, as docs/clients.md ("useChat") shows. Plain
 * `createElement` rather than JSX, so the repository's TypeScript settings check it as it is.
 */
import { useChat } from "@ai-sdk/react";
import { PaymentChatTransport, type PaymentUIMessage, paymentChatSchemas } from "@x402-chat-agent/client/ai";
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";

interface PageConfig {
  /** The service's origin (not this page's). */
  api: string;
  token: string;
  wallet: string;
}

const config = (window as unknown as { __chat: PageConfig }).__chat;
const transport = new PaymentChatTransport({
  baseUrl: config.api,
  // Asked at each turn, so a test can change it between turns.
  token: () => config.token,
  rateLimitRetry: false,
  fields: { walletAddress: config.wallet },
});

function parts(message: PaymentUIMessage) {
  return message.parts.map((p, i) =>
    p.type === "text"
      ? h("p", { key: `${message.id}-${i}`, "data-testid": "text" }, p.text)
      : p.type === "data-payment"
        ? h(
            "div",
            {
              key: p.id,
              "data-testid": "payment",
              "data-status": p.data.status,
              "data-transaction": p.data.transaction ?? "",
            },
            `$${p.data.amount?.usd} · ${p.data.status}`,
          )
        : null,
  );
}

function Chat() {
  const { messages, sendMessage, status, error, clearError } = useChat<PaymentUIMessage>({
    transport,
    ...paymentChatSchemas,
  });
  // Locked only while a turn runs: after an error (status "error") the user can send again.
  const busy = status === "submitted" || status === "streaming";
  const finish = messages.at(-1)?.metadata;
  return h(
    "form",
    {
      onSubmit: (e: SubmitEvent & { currentTarget: HTMLFormElement; preventDefault(): void }) => {
        e.preventDefault();
        const form = e.currentTarget;
        clearError();
        void sendMessage({ text: String(new FormData(form).get("q") ?? "") });
        form.reset();
      },
    },
    ...messages.flatMap(parts),
    finish ? h("p", { "data-testid": "finish", "data-finish-reason": finish.finishReason }) : null,
    error
      ? h(
          "p",
          { role: "alert", "data-testid": "error", "data-code": (error as { code?: string }).code ?? "" },
          error.message,
        )
      : null,
    h("output", { "data-testid": "status" }, status),
    h("input", { name: "q", placeholder: "Ask something", disabled: busy }),
    h("button", { type: "submit", disabled: busy }, "Send"),
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(h(Chat));
