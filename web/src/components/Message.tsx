import { paymentToolStates } from "../chat/approvals.js";
import type { ErrorPayload, FinishPayload, PaymentUIMessage, PaymentUpdate } from "../chat/types.js";
import { readable, shortHash } from "../format.js";
import type { PageWallet } from "../wallet/types.js";
import { type ApprovalState, PaymentCard } from "./PaymentCard.js";
import { approvalExpired, useNow } from "./useNow.js";

interface Props {
  message: PaymentUIMessage;
  wallet: PageWallet | undefined;
  approvals: Record<string, ApprovalState>;
  canAct: boolean;
  /** Whether this is the conversation's last message (only its cards can be approved). */
  last: boolean;
  /** Where this message's turn stopped to ask for approvals (its parts' count then). */
  asked: number[];
  localNetworks: ReadonlySet<string>;
  onApprove(payment: PaymentUpdate): void;
  onReject(payment: PaymentUpdate): void;
}

/** What became of an approval the words before asked for, by the card's status now. */
const ANSWERED: Partial<Record<PaymentUpdate["status"], string>> = {
  settled: "You approved this payment in your wallet.",
  rejected: "You declined this payment: nothing was paid.",
  expired: "The time to approve passed: nothing was paid.",
};

/**
 * The text parts that asked for an approval which is now answered or lapsed: those after the last
 * card before each mark, up to it. Not while the turn still waits at that mark.
 */
function staleAsking(message: PaymentUIMessage, asked: number[], waiting: boolean): Map<number, string> {
  const stale = new Map<number, string>();
  for (const end of asked) {
    if (waiting && end === message.parts.length) continue;
    let card = -1;
    for (let i = Math.min(end, message.parts.length) - 1; i >= 0; i--)
      if (message.parts[i]?.type === "data-payment") {
        card = i;
        break;
      }
    const payment = message.parts[card];
    if (payment?.type !== "data-payment") continue;
    const status = waiting
      ? payment.data.status
      : payment.data.status === "awaiting_approval"
        ? "expired"
        : payment.data.status;
    const note = ANSWERED[status] ?? "The approval asked here was answered.";
    // The note once, where the asking words began; the rest of them hidden.
    let first = true;
    for (let i = card + 1; i < end; i++)
      if (message.parts[i]?.type === "text") {
        stale.set(i, first ? note : "");
        first = false;
      }
  }
  return stale;
}

/** Whether the message's words repeat a refusal word for word (then it is shown once, there). */
function saidInWords(message: PaymentUIMessage, said: string): boolean {
  const words = said.trim().replace(/[.!]+$/, "");
  return words !== "" && message.parts.some((p) => p.type === "text" && p.text.includes(words));
}

/** A payment card's `e:` lines (those that name it) and its tool part's state. */
function cardParts(message: PaymentUIMessage, paymentId: string) {
  const errors: ErrorPayload[] = message.parts.flatMap((p) =>
    p.type === "data-error" && p.data.paymentId === paymentId ? [p.data] : [],
  );
  // No tool part (a conversation kept by an older page): nothing to answer it with.
  return { errors, tool: paymentToolStates(message).get(paymentId) ?? { state: "none" } };
}

const FINISH_LABELS: Record<string, string> = {
  stop: "Done",
  "payment-complete": "Paid",
  "payment-failed": "Payment failed",
  "payment-unclear": "Payment outcome not known yet (being checked; do not pay again)",
  "limit-exceeded": "Stopped by your limits",
  "insufficient-balance": "Not enough funds",
  "service-unavailable": "Service unavailable",
  "approval-required": "Waiting for your approval",
  error: "Error",
};

/**
 * Whether the turn still waits for an approval: one left waiting whose every approval window has
 * passed waits no more (the clock runs only while it could still lapse).
 */
function useApprovalWait(message: PaymentUIMessage): { waiting: boolean; lapsed: boolean } {
  const asking = message.metadata?.finishReason === "approval-required";
  const waits = message.parts.flatMap((p) =>
    p.type === "data-payment" && p.data.status === "awaiting_approval" ? [p.data.approval?.expiresAt] : [],
  );
  const now = useNow(asking && waits.length > 0);
  const lapsed = asking && waits.length > 0 && waits.every((at) => approvalExpired(at, now));
  // Or the ledger said so since (useLedgerStatus): every card of the turn expired unpaid.
  const cards = message.parts.flatMap((p) => (p.type === "data-payment" ? [p.data.status] : []));
  const expired = cards.length > 0 && cards.every((status) => status === "expired");
  return { waiting: asking && !lapsed, lapsed: lapsed || expired };
}

/** One message: text as it streams, a card per payment, errors, and the turn's finish line. */
export function Message({ message, last, asked, ...cardProps }: Props) {
  const finish = message.metadata;
  const { waiting, lapsed } = useApprovalWait(message);
  const stale = staleAsking(message, asked, waiting);
  if (message.role === "user") return <UserMessage message={message} />;
  const paymentIds = new Set(
    message.parts.flatMap((p) => (p.type === "data-payment" ? [p.data.paymentId] : [])),
  );
  return (
    <div className="msg msg-assistant" data-testid="assistant-message">
      {message.parts.map((part, i) => {
        switch (part.type) {
          case "text": {
            const note = stale.get(i);
            // The words that asked for an approval now answered: what became of it, said once.
            if (note !== undefined)
              return note === "" ? null : (
                // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id; their order never changes
                <p key={i} className="asked-note muted" data-testid="asked-note">
                  {note}
                </p>
              );
            return part.text.trim() ? (
              // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id; their order never changes
              <div key={i} className="text">
                {readable(part.text, cardProps.localNetworks)}
              </div>
            ) : null;
          }
          case "data-payment":
            return (
              <PaymentCard
                key={part.id ?? part.data.paymentId}
                payment={part.data}
                {...cardParts(message, part.data.paymentId)}
                approval={cardProps.approvals[part.data.paymentId]}
                superseded={!last}
                {...cardProps}
              />
            );
          case "data-error": {
            const paymentId = typeof part.data.paymentId === "string" ? part.data.paymentId : undefined;
            if (paymentId && paymentIds.has(paymentId)) return null; // shown on its card
            if (saidInWords(message, part.data.message)) return null; // the answer's words say it
            return (
              <div key={part.id ?? i} className="inline-error" role="alert" data-testid="stream-error">
                <strong>{part.data.code}</strong> {readable(part.data.message, cardProps.localNetworks)}
              </div>
            );
          }
          default:
            return null;
        }
      })}
      {finish ? <FinishLine finish={finish} lapsed={lapsed} /> : null}
    </div>
  );
}

function UserMessage({ message }: { message: PaymentUIMessage }) {
  return (
    <div className="msg msg-user" data-testid="user-message">
      {message.parts.map((part, i) =>
        part.type === "text" ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id; their order never changes
          <p key={i}>{part.text}</p>
        ) : null,
      )}
    </div>
  );
}

/** How the turn ended, and what answered it (the model asked for, the one that served it, tokens). */
function FinishLine({ finish, lapsed }: { finish: FinishPayload; lapsed: boolean }) {
  return (
    <div className="finish" data-testid="finish" data-finish-reason={finish.finishReason}>
      <span className={`finish-reason finish-${lapsed ? "approval-expired" : finish.finishReason}`}>
        {lapsed
          ? "Approval expired: nothing was paid"
          : (FINISH_LABELS[finish.finishReason] ?? finish.finishReason)}
      </span>
      {finish.transactionHash ? (
        <code title={finish.transactionHash}>{shortHash(finish.transactionHash)}</code>
      ) : null}
      <span className="muted">
        <span title="the model asked for, and what served it">
          {finish.model} ({finish.provider} {finish.modelId})
        </span>{" "}
        · {finish.usage.totalTokens} tokens
      </span>
    </div>
  );
}
