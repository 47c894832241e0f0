import { useEffect, useRef } from "react";
import type { AskedMarks } from "../chat/persist.js";
import type { PaymentUIMessage, PaymentUpdate } from "../chat/types.js";
import type { PageWallet } from "../wallet/types.js";
import type { ApprovalState } from "./card-types.js";
import { Message } from "./Message.js";

const EXAMPLES = ["What's the weather in Paris?", "What can I buy?", "Buy the premium report on AI"];

interface Props {
  messages: PaymentUIMessage[];
  /** A question sent and nothing streamed back yet. */
  thinking: boolean;
  /** An answer arriving: the live region waits for it whole (aria-busy), not read word by word. */
  streaming?: boolean;
  asked: AskedMarks;
  wallet: PageWallet | undefined;
  approvals: Record<string, ApprovalState>;
  canAct: boolean;
  localNetworks: ReadonlySet<string>;
  onAsk(question: string): void;
  onAnswer(payment: PaymentUpdate, approved: boolean): void;
}

/** Follow the stream (scroll on new parts and on growing text alike). */
function useFollowStream(messages: PaymentUIMessage[]) {
  const bottom = useRef<HTMLDivElement>(null);
  const lastPartsLength = messages.at(-1)?.parts.length ?? 0;
  const lastText = messages.at(-1)?.parts.at(-1);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scrolls when the last message grows
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [messages.length, lastPartsLength, lastText]);
  return bottom;
}

/** The messages as they stream, or, before the first question, what to ask. */
export function Conversation({
  messages,
  thinking,
  streaming = false,
  asked,
  onAsk,
  onAnswer,
  ...cards
}: Props) {
  const bottom = useFollowStream(messages);
  return (
    <section
      className="messages"
      aria-live="polite"
      aria-busy={streaming}
      aria-label="Conversation"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be reachable by keyboard (axe's scrollable-region-focusable), even before it holds a control.
      tabIndex={0}
    >
      {messages.length === 0 ? (
        <EmptyChat wallet={cards.wallet} onAsk={onAsk} />
      ) : (
        messages.map((message, index) => (
          <Message
            key={message.id}
            message={message}
            last={index === messages.length - 1}
            asked={asked[message.id] ?? []}
            {...cards}
            onApprove={(p) => onAnswer(p, true)}
            onReject={(p) => onAnswer(p, false)}
          />
        ))
      )}
      {thinking ? <div className="typing muted">Thinking…</div> : null}
      <div ref={bottom} />
    </section>
  );
}

function EmptyChat({ wallet, onAsk }: { wallet: PageWallet | undefined; onAsk(question: string): void }) {
  return (
    <div className="empty">
      <h2>Ask for something a paid service knows</h2>
      <p className="muted">
        The agent finds an x402 service, shows what it costs and your budget, pays in USDC within your limits
        (asking your wallet when it must), and answers from what it bought.
        {wallet ? "" : " Connect a wallet to let it pay."}
      </p>
      <div className="examples">
        {EXAMPLES.map((example) => (
          <button key={example} type="button" className="ghost" onClick={() => onAsk(example)}>
            {example}
          </button>
        ))}
      </div>
    </div>
  );
}
