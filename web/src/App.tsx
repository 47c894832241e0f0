import { useChat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useEffect, useMemo, useRef, useState } from "react";
import { paymentChatSchemas } from "../../src/client/index.js";
import { paymentToolStates, useEndPhases, usePageApprovals } from "./chat/approvals.js";
import {
  type AskedMarks,
  loadAsked,
  loadConversation,
  loadWalletChoice,
  saveAsked,
  saveConversation,
  saveWalletChoice,
} from "./chat/persist.js";
import { createTransport, describeError } from "./chat/transport.js";
import type { PaymentUIMessage, PaymentUpdate, TurnFields } from "./chat/types.js";
import { Composer } from "./components/Composer.js";
import { Message } from "./components/Message.js";
import { PaymentsPanel } from "./components/PaymentsPanel.js";
import { SettingsPanel } from "./components/SettingsPanel.js";
import { WalletMenu } from "./components/WalletMenu.js";
import { requestFields, settingsProblems, useSettings } from "./settings.js";
import type { PageWallet, WalletOption } from "./wallet/types.js";
import { useWallets } from "./wallet/useWallets.js";

const EXAMPLES = ["What's the weather in Paris?", "What can I buy?", "Buy the premium report on AI"];

export function App() {
  const [settings, setSettings] = useSettings();
  const [showSettings, setShowSettingsState] = useState(false);
  const [showPayments, setShowPayments] = useState(false);
  // One side panel at a time.
  const setShowSettings = (show: boolean) => {
    setShowSettingsState(show);
    if (show) setShowPayments(false);
  };
  const togglePayments = () => {
    setShowPayments(!showPayments);
    if (!showPayments) setShowSettingsState(false);
  };
  const { options, devnet } = useWallets();
  // The embedded devnet's networks: named local, no explorer link, "solana:localnet" to wallets.
  const localNetworks = useMemo(
    () => new Set([devnet?.evm?.network, devnet?.solana?.network].filter((n): n is string => !!n)),
    [devnet],
  );
  const [wallet, setWallet] = useState<PageWallet>();
  const { signer, approvals, setApprovals, answerWallet } = usePageApprovals(wallet, localNetworks);
  // The transport asks for the current settings at every request (an answer: the paying wallet's).
  const fields = useRef<TurnFields>({});
  fields.current = requestFields(settings, wallet?.address);
  // A limit the page cannot read would be left out of the request (the server's default would
  // apply instead of what was typed): nothing is sent until it is fixed.
  const invalid = settingsProblems(settings);
  const token = useRef<string | undefined>(undefined);
  token.current = settings.token.trim() || undefined;
  const transport = useMemo(
    () =>
      createTransport({
        fields: () =>
          answerWallet.current ? { ...fields.current, walletAddress: answerWallet.current } : fields.current,
        token: () => token.current,
        signer,
      }),
    [signer, answerWallet],
  );
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
  const bottom = useRef<HTMLDivElement>(null);
  const busy = status === "submitted" || status === "streaming";
  useEndPhases(busy, setApprovals);

  useEffect(() => {
    if (!busy) saveConversation(messages);
  }, [busy, messages]);

  // A turn that stopped to ask for an approval: mark where its asking words end (Message.tsx).
  const [asked, setAsked] = useState<AskedMarks>(loadAsked);
  useEffect(() => {
    const last = messages.at(-1);
    if (busy || last?.role !== "assistant" || last.metadata?.finishReason !== "approval-required") return;
    const end = last.parts.length;
    setAsked((marks) => {
      if (marks[last.id]?.includes(end)) return marks;
      const next = { ...marks, [last.id]: [...(marks[last.id] ?? []), end] };
      saveAsked(next);
      return next;
    });
  }, [busy, messages]);

  // The devnet wallet signs in the page, so a reload reconnects it; a browser wallet is asked again.
  useEffect(() => {
    const choice = loadWalletChoice();
    const option = options.find((o) => o.id === choice && o.source === "devnet");
    if (!wallet && option) void option.connect().then(setWallet);
  }, [options, wallet]);

  // Follow the stream (scroll on new parts and on growing text alike).
  const lastPartsLength = messages.at(-1)?.parts.length ?? 0;
  const lastText = messages.at(-1)?.parts.at(-1);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scrolls when the last message grows
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [messages.length, lastPartsLength, lastText]);

  const connect = async (option: WalletOption) => {
    const connected = await option.connect();
    setWallet(connected);
    saveWalletChoice(connected.optionId);
  };
  const disconnect = () => {
    setWallet(undefined);
    saveWalletChoice(undefined);
  };

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
    setAsked({});
    saveAsked({});
    setMessages([]);
  };

  const devnetOptions = options.filter((o) => o.source === "devnet");
  // An `e:` line is already shown where it happened (its card, or inline), as is an answer's
  // refusal (on its card): no banner for them again.
  const shownInStream =
    messages.at(-1)?.parts.some((p) => p.type === "data-error" && p.data.message === error?.message) ||
    [...paymentToolStates(messages.at(-1)).values()].some((t) => t.error === error?.message);
  const showBanner = error !== undefined && !shownInStream;

  return (
    <div className={`layout${showSettings || showPayments ? " with-settings" : ""}`}>
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden="true">
            x402
          </span>
          <div>
            <h1>Payment agent</h1>
            <p className="muted small">Asks, quotes, pays within your limits, answers.</p>
          </div>
        </div>
        <div className="topbar-actions">
          <button
            type="button"
            className="ghost"
            aria-expanded={showSettings}
            onClick={() => setShowSettings(!showSettings)}
          >
            Settings
          </button>
          <button type="button" className="ghost" aria-expanded={showPayments} onClick={togglePayments}>
            Payments
          </button>
          <WalletMenu options={options} wallet={wallet} onConnect={connect} onDisconnect={disconnect} />
        </div>
      </header>

      <main className="chat">
        {devnet && !wallet && devnetOptions.length > 0 ? (
          <section className="devnet-banner" data-testid="devnet-banner">
            <p>
              <strong>Local test network.</strong> This service runs the embedded devnet: its money is
              simulated. No wallet extension? Use its funded test wallet, which signs here in the page.
            </p>
            <div className="devnet-actions">
              {devnetOptions.map((option) => (
                <button
                  key={option.id}
                  type="button"
                  className="primary"
                  onClick={() => void connect(option)}
                >
                  Use the {option.name.replace(/^Devnet/, "devnet")}
                </button>
              ))}
            </div>
          </section>
        ) : null}

        <section className="messages" aria-live="polite">
          {messages.length === 0 ? (
            <div className="empty">
              <h2>Ask for something a paid service knows</h2>
              <p className="muted">
                The agent finds an x402 service, shows what it costs and your budget, pays in USDC within your
                limits (asking your wallet when it must), and answers from what it bought.
                {wallet ? "" : " Connect a wallet to let it pay."}
              </p>
              <div className="examples">
                {EXAMPLES.map((example) => (
                  <button key={example} type="button" className="ghost" onClick={() => send(example)}>
                    {example}
                  </button>
                ))}
              </div>
            </div>
          ) : (
            messages.map((message, index) => (
              <Message
                key={message.id}
                message={message}
                last={index === messages.length - 1}
                asked={asked[message.id] ?? []}
                wallet={wallet}
                approvals={approvals}
                canAct={!busy}
                localNetworks={localNetworks}
                onApprove={(p) => answer(p, true)}
                onReject={(p) => answer(p, false)}
              />
            ))
          )}
          {status === "submitted" ? <div className="typing muted">Thinking…</div> : null}
          <div ref={bottom} />
        </section>

        {error && showBanner ? (
          <div className="banner-error" role="alert" data-testid="chat-error">
            {describeError(error)}
            <button type="button" className="link" onClick={clearError}>
              Dismiss
            </button>
          </div>
        ) : null}

        <Composer
          input={input}
          onInput={setInput}
          wallet={wallet}
          busy={busy}
          invalid={invalid}
          settingsOpen={showSettings}
          onOpenSettings={() => setShowSettings(true)}
          onSend={send}
          onStop={() => void stop()}
          onNewChat={messages.length > 0 && !busy ? newChat : undefined}
        />
      </main>

      {showSettings ? (
        <SettingsPanel settings={settings} onChange={setSettings} onClose={() => setShowSettings(false)} />
      ) : null}
      {showPayments ? (
        <PaymentsPanel
          token={settings.token.trim() || undefined}
          localNetworks={localNetworks}
          onClose={() => setShowPayments(false)}
        />
      ) : null}
    </div>
  );
}
