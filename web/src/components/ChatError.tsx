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
  return (
    <div className="banner-error" role="alert" data-testid="chat-error">
      {describeError(error)}
      <button type="button" className="link" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

function shownInStream(last: PaymentUIMessage | undefined, error: Error): boolean {
  return (
    last?.parts.some((p) => p.type === "data-error" && p.data.message === error.message) ||
    [...paymentToolStates(last).values()].some((t) => t.error === error.message)
  );
}
