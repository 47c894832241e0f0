import { useEffect, useState } from "react";
import { usePaymentChat } from "./chat/usePaymentChat.js";
import { useTab } from "./chat/useTab.js";
import { ChatError } from "./components/ChatError.js";
import { Composer } from "./components/Composer.js";
import { Conversation } from "./components/Conversation.js";
import { PaymentsPanel } from "./components/PaymentsPanel.js";
import { SettingsPanel } from "./components/SettingsPanel.js";
import { TabBar } from "./components/TabBar.js";
import { TopBar } from "./components/TopBar.js";
import { useSettings } from "./settings.js";
import type { WalletOption } from "./wallet/types.js";
import { usePageWallet } from "./wallet/usePageWallet.js";
import { useWalletSession } from "./wallet/useWalletSession.js";
import { useWallets } from "./wallet/useWallets.js";

export function App() {
  const [settings, setSettings] = useSettings();
  const panels = useSidePanels();
  const { options, devnet, localNetworks } = useWallets();
  const { wallet, connect, disconnect } = usePageWallet(options);
  const tabs = useTab(wallet, () => settings.token.trim() || undefined, localNetworks);
  const chat = usePaymentChat(settings, wallet, localNetworks, tabs.payingToken);
  const walletSession = useWalletSession(wallet);
  // After each answer the tab is read again: what it holds now.
  const { refresh } = tabs;
  useEffect(() => {
    if (!chat.busy) void refresh();
  }, [chat.busy, refresh]);
  return (
    <div className={`layout${panels.showSettings || panels.showPayments ? " with-settings" : ""}`}>
      <TopBar
        showSettings={panels.showSettings}
        showPayments={panels.showPayments}
        onToggleSettings={() => panels.setShowSettings(!panels.showSettings)}
        onTogglePayments={panels.togglePayments}
        options={options}
        wallet={wallet}
        onConnect={connect}
        onDisconnect={disconnect}
      />
      <main className="chat">
        {devnet && !wallet ? (
          <DevnetBanner
            options={options}
            onConnect={async (option) => {
              await connect(option);
              // The banner (and the button pressed) goes: the question box is where one goes next.
              document.querySelector<HTMLTextAreaElement>("textarea[name=question]")?.focus();
            }}
          />
        ) : null}
        {wallet ? (
          <TabBar
            tab={tabs.tab}
            busy={tabs.busy}
            error={tabs.error}
            localNetworks={localNetworks}
            onOpen={(amount, seconds) => void tabs.open(amount, seconds)}
            onClose={() => void tabs.close()}
          />
        ) : null}
        <Conversation
          messages={chat.messages}
          thinking={chat.status === "submitted"}
          streaming={chat.status === "streaming"}
          asked={chat.asked}
          wallet={wallet}
          approvals={chat.approvals}
          canAct={!chat.busy}
          localNetworks={localNetworks}
          onAsk={chat.send}
          onAnswer={chat.answer}
        />
        <ChatError error={chat.error} messages={chat.messages} onDismiss={chat.clearError} />
        <Composer
          input={chat.input}
          onInput={chat.setInput}
          wallet={wallet}
          busy={chat.busy}
          invalid={chat.invalid}
          settingsOpen={panels.showSettings}
          onOpenSettings={() => panels.setShowSettings(true)}
          onSend={chat.send}
          onStop={() => void chat.stop()}
          onNewChat={chat.messages.length > 0 && !chat.busy ? chat.newChat : undefined}
        />
      </main>
      {panels.showSettings ? (
        <SettingsPanel
          settings={settings}
          onChange={setSettings}
          onClose={() => panels.setShowSettings(false)}
        />
      ) : null}
      {panels.showPayments ? (
        <PaymentsPanel
          token={settings.token.trim() || undefined}
          wallet={walletSession}
          localNetworks={localNetworks}
          onClose={panels.closePayments}
        />
      ) : null}
    </div>
  );
}

/** One side panel at a time: opening Settings or Payments closes the other. */
function useSidePanels() {
  const [showSettings, setShowSettingsState] = useState(false);
  const [showPayments, setShowPayments] = useState(false);
  const setShowSettings = (show: boolean) => {
    setShowSettingsState(show);
    if (show) setShowPayments(false);
  };
  const togglePayments = () => {
    setShowPayments(!showPayments);
    if (!showPayments) setShowSettingsState(false);
  };
  return {
    showSettings,
    showPayments,
    setShowSettings,
    togglePayments,
    closePayments: () => setShowPayments(false),
  };
}

interface DevnetBannerProps {
  options: WalletOption[];
  onConnect(option: WalletOption): Promise<void>;
}

/**
 * Offered only while the service runs the embedded devnet and no wallet is connected. Kept here,
 * not in components/: test/docs.test.ts checks that the README names these buttons as this file does.
 */
function DevnetBanner({ options, onConnect }: DevnetBannerProps) {
  const devnetOptions = options.filter((o) => o.source === "devnet");
  if (devnetOptions.length === 0) return null;
  return (
    <section className="devnet-banner" data-testid="devnet-banner">
      <p>
        <strong>Local test network.</strong> This service runs the embedded devnet: its money is simulated. No
        wallet extension? Use its funded test wallet, which signs here in the page.
      </p>
      <div className="devnet-actions">
        {devnetOptions.map((option) => (
          <button key={option.id} type="button" className="primary" onClick={() => void onConnect(option)}>
            Use the {option.name.replace(/^Devnet/, "devnet")}
          </button>
        ))}
      </div>
    </section>
  );
}
