import { useChat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useEffect, useRef, useState } from "react";
import { paymentChatSchemas } from "../../../src/client/ai.js";
import { type Settings, settingsProblems } from "../settings.js";
import type { PageWallet } from "../wallet/types.js";
import { useEndPhases, usePageApprovals } from "./approvals.js";
import { loadConversation, saveConversation } from "./persist.js";
import { usePageTransport } from "./transport.js";
import type { PaymentUIMessage, PaymentUpdate } from "./types.js";
import { useAskedMarks } from "./useAskedMarks.js";
import { useLedgerStatus } from "./useLedgerStatus.js";

/**
 * The chat page's conversation: `useChat` over the SDK's transport with the page's settings and
 * wallet, kept for this tab, and what a person does to it (ask, answer a card, start afresh).
 */
export function usePaymentChat(
  settings: Settings,
  wallet: PageWallet | undefined,
  localNetworks: ReadonlySet<string>,
  tab?: string,
) {
  const { signer, approvals, setApprovals, answerWallet } = usePageApprovals(wallet, localNetworks);
  const transport = usePageTransport(settings, wallet?.address, signer, answerWallet, tab);
  // A limit the page cannot read would be left out of the request (the server's default would
  // apply instead of what was typed): nothing is sent until it is fixed.
  const invalid = settingsProblems(settings);
  // The protocol's schemas check every part and finish as it arrives.
  // A reload finds the conversation as it was (a card awaiting approval can still be approved).
  const [restored] = useState(loadConversation);
  // An approval answered on a card (addToolApprovalResponse) is sent, signed, at once.
  const chat = useChat<PaymentUIMessage>({
    transport,
    messages: restored,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    ...paymentChatSchemas,
  });
  const { messages, sendMessage, status, error, stop, clearError, setMessages } = chat;
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";
  useEndPhases(busy, setApprovals);
  // Kept between turns, and within one at each payment's step: a reload while a payment is under
  // way finds the question and its card, which then asks the ledger what became of it (h52).
  const steps = paymentSteps(messages);
  const savedSteps = useRef("");
  useEffect(() => {
    if (busy && steps === savedSteps.current) return;
    savedSteps.current = steps;
    saveConversation(messages);
  }, [busy, messages, steps]);
  const { asked, clearAsked } = useAskedMarks(messages, busy);
  // A card left waiting between turns takes the ledger's status (paid, lapsed) from the service.
  useLedgerStatus(messages, busy, setMessages, () => settings.token.trim() || undefined);

  const send = (text: string) => {
    const question = text.trim();
    if (!question || busy || invalid.length > 0) return;
    clearError();
    setInput("");
    answerWallet.current = undefined;
    void sendMessage({ text: question });
  };

  /** Approve or decline a card: its tool part answered; the transport signs (approved) and sends. */
  const answer = (payment: PaymentUpdate, approved: boolean) => {
    const id = payment.paymentId;
    if (invalid.length > 0) {
      const error = "Not sent: a spending limit in Settings is not valid (see below the chat).";
      setApprovals((a) => ({ ...a, [id]: { phase: "idle", error } }));
      return;
    }
    setApprovals(({ [id]: _, ...others }) => others);
    answerWallet.current = payment.approval?.wallet ?? wallet?.address;
    void chat.addToolApprovalResponse({ id, approved });
  };

  /** A new conversation: nothing of the last one stays, its errors included. */
  const newChat = () => {
    clearError();
    setApprovals({});
    clearAsked();
    setMessages([]);
  };

  return {
    messages,
    status,
    error,
    stop,
    clearError,
    busy,
    invalid,
    approvals,
    asked,
    input,
    setInput,
    send,
    answer,
    newChat,
  };
}

/** Each payment card's id and status, as one string: what changes when a payment moves on. */
function paymentSteps(messages: PaymentUIMessage[]): string {
  return messages
    .flatMap((m) =>
      m.parts.flatMap((p) => (p.type === "data-payment" ? [`${p.data.paymentId}:${p.data.status}`] : [])),
    )
    .join(",");
}
