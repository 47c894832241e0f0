import { useEffect, useState } from "react";
import { loadWalletChoice, saveWalletChoice } from "../chat/persist.js";
import type { PageWallet, WalletOption } from "./types.js";

/**
 * The chat page's connected wallet, its choice kept for this tab (chat/persist.ts). The devnet
 * wallet signs in the page, so a reload reconnects it; a browser wallet is asked again.
 */
export function usePageWallet(options: WalletOption[]) {
  const [wallet, setWallet] = useState<PageWallet>();
  useEffect(() => {
    const choice = loadWalletChoice();
    const option = options.find((o) => o.id === choice && o.source === "devnet");
    if (!wallet && option) void option.connect().then(setWallet);
  }, [options, wallet]);
  const connect = async (option: WalletOption) => {
    const connected = await option.connect();
    setWallet(connected);
    saveWalletChoice(connected.optionId);
  };
  const disconnect = () => {
    setWallet(undefined);
    saveWalletChoice(undefined);
  };
  return { wallet, connect, disconnect };
}
