import type { ChatTransport } from "ai";
import { type RefObject, useMemo, useRef } from "react";
import { PaymentChatTransport, type TurnFields } from "../../../src/client/ai.js";
import { ChatHttpError, type TransportSigner } from "../../../src/client/index.js";
import { requestFields, type Settings } from "../settings.js";
import type { PaymentUIMessage } from "./types.js";

/**
 * The page's `useChat` transport: the SDK's own (`x402-chat-agent/client`, src/client/transport.ts),
 * asked at every request for the page's current settings and token. A 429 is shown, not waited out
 * silently. Approvals go the AI SDK's way: each payment awaiting the wallet is a tool part the
 * page answers with `addToolApprovalResponse`, and `signer` (the page's wallet) signs it.
 */
export function createTransport(source: {
  fields: () => TurnFields;
  token: () => string | undefined;
  signer: TransportSigner;
}): ChatTransport<PaymentUIMessage> {
  return new PaymentChatTransport({
    fields: source.fields,
    token: source.token,
    signer: source.signer,
    rateLimitRetry: false,
  });
}

/**
 * The chat page's transport, made once: it reads the settings and token of the latest render at
 * every request, so a limit changed mid-conversation applies to the next request. An answer is
 * paid from the wallet its card asked for (`answerWallet`), laid over the request's fields.
 */
export function usePageTransport(
  settings: Settings,
  walletAddress: string | undefined,
  signer: TransportSigner,
  answerWallet: RefObject<string | undefined>,
  tab?: string,
): ChatTransport<PaymentUIMessage> {
  const fields = useRef<TurnFields>({});
  // An open tab of this wallet pays what it can (docs/clients.md, "Tabs").
  fields.current = { ...requestFields(settings, walletAddress), ...(tab && walletAddress ? { tab } : {}) };
  const token = useRef<string | undefined>(undefined);
  token.current = settings.token.trim() || undefined;
  return useMemo(
    () =>
      createTransport({
        fields: () => {
          const other = answerWallet.current;
          if (!other || other === fields.current.walletAddress) return fields.current;
          // Another wallet answers a card: the tab is not its own.
          const { tab: _tab, ...rest } = fields.current;
          return { ...rest, walletAddress: other };
        },
        token: () => token.current,
        signer,
      }),
    [signer, answerWallet],
  );
}

/** An error for people: a refusal's detail and code (and when to retry), or the error's message. */
/** What a person on this page does about a refusal the service words for any client. */
const NEXT_STEP: Record<string, string> = {
  no_wallet: "Connect a wallet with the button at the top right, then ask again.",
  unauthorized: "Check the token in Settings, or clear it.",
};

export function describeError(error: unknown): string {
  if (error instanceof ChatHttpError) {
    const retry = error.retryAfterSeconds !== undefined ? ` Try again in ${error.retryAfterSeconds} s.` : "";
    const next = NEXT_STEP[error.code] ? ` ${NEXT_STEP[error.code]}` : "";
    return `${error.message} (${error.code})${retry}${next}`;
  }
  // The browser's own words for a request that never reached the service ("Failed to fetch",
  // "NetworkError when attempting to fetch resource.", "Load failed"): what the operator page says (h52).
  if (error instanceof TypeError && /fetch|network|load failed/i.test(error.message))
    return "The service cannot be reached. Check the connection, then try again.";
  return error instanceof Error ? error.message : String(error);
}
