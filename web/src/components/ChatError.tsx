import { isUnresolved } from "../../../src/protocol/status.js";
import type { PaymentStatus } from "../../../src/protocol/stream.js";
import { paymentToolStates } from "../chat/approvals.js";
import { describeError } from "../chat/transport.js";
import type { PaymentUIMessage } from "../chat/types.js";

interface Props {
  error: Error | undefined;
  messages: PaymentUIMessage[];
  onDismiss(): void;
}

/**
 * The chat's error as a banner, unless it is already shown where it happened: an `e:` line (on its
 * card, or inline) or an answer's refusal (on its card) is not repeated here.
 */
export function ChatError({ error, messages, onDismiss }: Props) {
  if (error === undefined || shownInStream(messages.at(-1), error)) return null;
  const underWay = paymentsUnderWay(messages.at(-1));
  return (
    <div className="banner-error" role="alert" data-testid="chat-error">
      {describeError(error)}
      {underWay.length > 0 ? (
        <span data-testid="chat-error-payment">
          {" "}
          A payment was under way when the answer stopped: it may have gone through. Check Payments before
          asking again.
        </span>
      ) : null}
      <button type="button" className="link" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** The payments of the answer whose last `p:` line left them unresolved: money may still move. */
function paymentsUnderWay(last: PaymentUIMessage | undefined): string[] {
  const status = new Map<string, PaymentStatus>();
  for (const p of last?.parts ?? [])
    if (p.type === "data-payment") status.set(p.data.paymentId, p.data.status);
  return [...status].filter(([, s]) => isUnresolved(s)).map(([id]) => id);
}

function shownInStream(last: PaymentUIMessage | undefined, error: Error): boolean {
  return (
    last?.parts.some((p) => p.type === "data-error" && p.data.message === error.message) ||
    [...paymentToolStates(last).values()].some((t) => t.error === error.message)
  );
}
