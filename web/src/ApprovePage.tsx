import { useEffect, useState } from "react";
import type { ApprovalView } from "../../src/protocol/approval-view.js";
import { type Outcome, problemText, useAnswer } from "./approve-answer.js";
import type { PaymentUpdate } from "./chat/types.js";
import { ApprovalBox } from "./components/ApprovalBox.js";
import { Brand } from "./components/TopBar.js";
import { WalletMenu } from "./components/WalletMenu.js";
import { hostOf, networkName, readable, shortHash, usd } from "./format.js";
import type { PageWallet, WalletOption } from "./wallet/types.js";
import { useWallets } from "./wallet/useWallets.js";

/**
 * The approval page (`/approve/<paymentId>`, docs/clients.md "The approval page"): an agent (an
 * MCP client, say) sends the user here to approve one payment in the wallet. It shows the payment
 * in words (GET /api/approvals/:id), the wallet signs exactly what it is asked, and the answer goes
 * to POST /api/approvals/:id. The service's answer goes to the agent that asked, never to this page.
 */

const STATUS_WORDS: Record<string, string> = {
  // Kept for the caller that asked (an MCP session reads it; a chat page lists the payment): h52.
  settled: "Paid. The service's answer is kept for the agent or app that asked for this payment.",
  submitted: "Sent; the payment is being settled. The agent that asked will see how it ends.",
  unknown: "Sent, but its outcome is not clear yet: it is being checked on chain. Do not approve it again.",
  failed: "The payment failed: nothing was taken from your wallet.",
  expired: "The time to approve has passed: nothing was signed or paid.",
  rejected: "Declined: nothing was paid, and this payment can no longer be approved.",
  // A tab's funding (MCP's open_tab), answered here.
  open: "Your tab is open: the agent that asked pays from it without asking again until it ends, and what is left then returns to your wallet.",
  funding: "Sent: the tab opens once the chain has the funding. Do not sign it again.",
  // Waiting, but not offered: the key of the agent that asked was revoked or has expired.
  awaiting_approval: "This payment can no longer be approved: nothing was signed or paid.",
};

/** The view as the chat's approval card reads a payment (the same card, the same checks). */
function asUpdate(view: ApprovalView): PaymentUpdate {
  return {
    paymentId: view.paymentId,
    status: view.status,
    service: view.service,
    amount: view.amount,
    network: view.network,
    payTo: view.payTo,
    ...(view.approval ? { approval: view.approval } : {}),
  };
}

function Result({ outcome }: { outcome: Outcome }) {
  return (
    <div className="approve-result" role="status" data-testid="approve-result" data-status={outcome.status}>
      <p>
        <strong>{STATUS_WORDS[outcome.status] ?? `The payment is ${outcome.status}.`}</strong>
      </p>
      {outcome.transaction ? (
        <p className="muted small">
          {usd(outcome.amount.usd)}, transaction{" "}
          <code title={outcome.transaction}>{shortHash(outcome.transaction)}</code>
        </p>
      ) : null}
      {outcome.error ? <p className="card-error">{outcome.error.message}</p> : null}
      <p className="muted small">You can close this page.</p>
    </div>
  );
}

/** The payment as GET /api/approvals/:id says, or why it cannot be shown. */
function useApprovalView(paymentId: string): { view?: ApprovalView; loadError?: string } {
  const [view, setView] = useState<ApprovalView>();
  const [loadError, setLoadError] = useState<string>();
  useEffect(() => {
    void fetch(`/api/approvals/${encodeURIComponent(paymentId)}`, { cache: "no-store" }).then(
      async (response) =>
        response.ok
          ? setView((await response.json()) as ApprovalView)
          : setLoadError(await problemText(response)),
      () => setLoadError("The service cannot be reached."),
    );
  }, [paymentId]);
  return { ...(view ? { view } : {}), ...(loadError ? { loadError } : {}) };
}

interface SectionProps {
  view: ApprovalView;
  wallet: PageWallet | undefined;
  local: boolean;
  localNetworks: ReadonlySet<string>;
  /** The devnet's test wallets of the payment's chain, offered while none is connected. */
  devnetOptions: WalletOption[];
  connect(option: WalletOption): Promise<void>;
  answer: ReturnType<typeof useAnswer>;
}

/** The payment in words, then its approval card, or what came of it. */
function PaymentSection({
  view,
  wallet,
  local,
  localNetworks,
  devnetOptions,
  connect,
  answer,
}: SectionProps) {
  const { approval, outcome, declined } = answer;
  return (
    <section className="approve-card" aria-labelledby="approve-heading">
      <h2 id="approve-heading">
        {usd(view.amount.usd)} to {view.service.name ?? view.service.url}
        {view.service.name ? ` (${hostOf(view.service.url)})` : ""}
      </h2>
      <p className="muted small">
        On {networkName(view.network, local)}, from wallet <code>{view.wallet}</code>.{" "}
        {view.tab ? "Tab" : "Payment"} {shortHash(view.paymentId, 8)}.
        {view.expiresAt && view.approval && !outcome
          ? ` Approve before ${new Date(view.expiresAt).toLocaleTimeString()}, or nothing is paid.`
          : ""}
      </p>
      {view.tab ? <p data-testid="approve-tab-words">{readable(view.tab.words, localNetworks)}</p> : null}
      {!wallet && devnetOptions.length > 0 && view.approval && !outcome ? (
        <div className="devnet-actions">
          {devnetOptions.map((option) => (
            <button key={option.id} type="button" className="primary" onClick={() => void connect(option)}>
              Use the {option.name.replace(/^Devnet/, "devnet")}
            </button>
          ))}
        </div>
      ) : null}
      {outcome ? (
        <Result outcome={outcome} />
      ) : declined ? (
        <p role="status" data-testid="approve-declined">
          <strong>Not approved: nothing was signed or paid.</strong> This payment lapses unpaid
          {view.expiresAt ? ` at ${new Date(view.expiresAt).toLocaleTimeString()}` : ""}; you can close this
          page.
        </p>
      ) : view.approval ? (
        <ApprovalBox
          payment={asUpdate(view)}
          wallet={wallet}
          approval={approval}
          canAct={true}
          superseded={false}
          localNetworks={localNetworks}
          onApprove={(p) => void answer.approve(p)}
          onReject={(p) => void answer.decline(p)}
        />
      ) : (
        <p role="status" data-testid="approve-status" data-status={view.status}>
          {STATUS_WORDS[view.tab?.status ?? view.status] ??
            `This ${view.tab ? "tab" : "payment"} is ${view.tab?.status ?? view.status}.`}
        </p>
      )}
    </section>
  );
}

export function ApprovePage({ paymentId }: { paymentId: string }) {
  const { options, devnet, localNetworks } = useWallets();
  const [wallet, setWallet] = useState<PageWallet>();
  const { view, loadError } = useApprovalView(paymentId);
  const local = view !== undefined && localNetworks.has(view.network);
  const answer = useAnswer(paymentId, view, wallet, local);
  const connect = async (option: WalletOption) => setWallet(await option.connect());
  const chain = view?.network.startsWith("solana:") ? "solana" : "evm";
  // Only a wallet of the payment's chain family can sign it: the menu offers no other.
  const usable = view ? options.filter((o) => o.chain === chain) : options;
  const devnetOptions = usable.filter((o) => o.source === "devnet");
  return (
    <div className="layout approve-layout">
      <header className="topbar">
        <Brand title="Approve a payment" subtitle="An agent asks your wallet to pay for a service." />
        <div className="topbar-actions">
          <WalletMenu
            options={usable}
            wallet={wallet}
            onConnect={connect}
            onDisconnect={() => setWallet(undefined)}
          />
        </div>
      </header>
      <main className="chat approve-main">
        {loadError ? (
          <p className="card-error" role="alert" data-testid="approve-error">
            {loadError}
          </p>
        ) : null}
        {!view && !loadError ? <p className="muted">Loading the payment…</p> : null}
        {view ? (
          <PaymentSection
            view={view}
            wallet={wallet}
            local={local}
            localNetworks={localNetworks}
            devnetOptions={devnet ? devnetOptions : []}
            connect={connect}
            answer={answer}
          />
        ) : null}
      </main>
    </div>
  );
}
