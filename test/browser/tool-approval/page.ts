/**
 * A `useChat` page that knows nothing of x402 (test/browser/tool-approval.test.ts serves it): it
 * renders the AI SDK's own tool parts and answers an approval with `addToolApprovalResponse`; the
 * only line of this project is `new PaymentChatTransport({ ..., signer })`, the signer being the
 * browser's EIP-1193 wallet (here a test wallet injected as an extension would be). The SDK is
 * bundled from its source (this checkout's; the package's files are its build). Plain `createElement`
 * rather than JSX, so the repository's TypeScript settings check it as it is.
 */
import { useChat } from "@ai-sdk/react";
import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";
import { PaymentChatTransport } from "../../../src/client/ai.js";
import type { Eip1193Provider } from "../../../src/client/index.js";

interface PageConfig {
  /** The service's origin (not this page's). */
  api: string;
  wallet: string;
  /** The service's token, for a wallet whose payments its key signs. */
  token?: string;
  /** Networks the page allows (spending limits), when it picks one. */
  networks?: string[];
}

const page = window as unknown as {
  __chat: PageConfig;
  ethereum: Eip1193Provider;
  /** A Solana wallet's signTransaction, base64 in and out (here the test's, as an extension's would be). */
  solanaSignTransaction?: (transaction: string) => Promise<string>;
};
const config = page.__chat;
const { solanaSignTransaction } = page;
const transport = new PaymentChatTransport({
  baseUrl: config.api,
  ...(config.token ? { token: config.token } : {}),
  rateLimitRetry: false,
  fields: {
    walletAddress: config.wallet,
    ...(config.networks ? { spendingLimits: { allowedNetworks: config.networks } } : {}),
  },
  signer: { evm: page.ethereum, ...(solanaSignTransaction ? { solana: solanaSignTransaction } : {}) },
});

function Chat() {
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const busy = status === "submitted" || status === "streaming";
  const parts = (message: UIMessage) =>
    message.parts.map((part, i) => {
      const key = `${message.id}-${i}`;
      if (part.type === "text") return h("p", { key, "data-testid": "text" }, part.text);
      if (!isToolUIPart(part)) return null;
      const descriptor = part.approval?.descriptor as { summary?: string } | undefined;
      return h(
        "section",
        {
          key,
          "data-testid": "tool",
          "data-state": part.state,
          "data-output": part.state === "output-available" ? JSON.stringify(part.output) : "",
          "data-automatic": String(part.approval?.isAutomatic === true),
          "data-approved": String(part.approval?.approved ?? ""),
        },
        part.approval?.reason ? h("p", { "data-testid": "reason" }, part.approval.reason) : null,
        h("p", { "data-testid": "summary" }, descriptor?.summary ?? part.title ?? ""),
        part.state === "output-error" ? h("p", { "data-testid": "tool-error" }, part.errorText) : null,
        part.state === "approval-requested"
          ? [
              h(
                "button",
                {
                  key: "yes",
                  type: "button",
                  onClick: () => addToolApprovalResponse({ id: part.approval.id, approved: true }),
                },
                "Approve",
              ),
              h(
                "button",
                {
                  key: "no",
                  type: "button",
                  onClick: () => addToolApprovalResponse({ id: part.approval.id, approved: false }),
                },
                "Reject",
              ),
            ]
          : null,
      );
    });
  return h(
    "form",
    {
      onSubmit: (e: SubmitEvent & { currentTarget: HTMLFormElement; preventDefault(): void }) => {
        e.preventDefault();
        const form = e.currentTarget;
        void sendMessage({ text: String(new FormData(form).get("q") ?? "") });
        form.reset();
      },
    },
    ...messages.flatMap(parts),
    error ? h("p", { role: "alert", "data-testid": "error" }, error.message) : null,
    h("output", { "data-testid": "status" }, status),
    h("input", { name: "q", placeholder: "Ask something", disabled: busy }),
    h("button", { type: "submit", disabled: busy }, "Send"),
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(h(Chat));
