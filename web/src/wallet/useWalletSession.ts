import { useState } from "react";
import { ChatClient, type WalletSession } from "../../../src/client/index.js";
import { describeError } from "../chat/transport.js";
import type { PageWallet } from "./types.js";

/**
 * The connected wallet's sign-in (docs/clients.md, "Signing in with a wallet"): its session token
 * reads the payments made from it. Kept in memory only, while the page is open; another wallet
 * (or none), or the session's end, drops it; signing out ends it on the service as well.
 */
export function useWalletSession(wallet: PageWallet | undefined) {
  const [session, setSession] = useState<WalletSession>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const current =
    session &&
    wallet &&
    session.wallet.toLowerCase() === wallet.address.toLowerCase() &&
    Date.parse(session.expiresAt) > Date.now()
      ? session
      : undefined;
  const signer = wallet?.signIn;
  const signIn = signer
    ? async () => {
        setBusy(true);
        setError(undefined);
        try {
          setSession(await new ChatClient().signIn(signer));
        } catch (e) {
          setError(describeError(e));
        } finally {
          setBusy(false);
        }
      }
    : undefined;
  // Signing out ends the session on the service too (its token reads nothing more), then here.
  const signOut = current
    ? async () => {
        setBusy(true);
        setError(undefined);
        try {
          await new ChatClient().signOut(current.token);
          setSession(undefined);
        } catch (e) {
          setError(describeError(e));
        } finally {
          setBusy(false);
        }
      }
    : undefined;
  return { session: current, signIn, signOut, busy, error };
}
