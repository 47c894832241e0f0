/**
 * Tabs (docs/payments.md#tabs): a budget the user's own wallet funds with one signature, paid from
 * by a session key the service derives for that tab alone, the rest returned when it closes.
 */
export { TabDesk } from "./desk.js";
export { TabKeeper } from "./keeper.js";
export { newToken, sessionKey, tabIdOf, tokenHash } from "./keys.js";
export { facilitatorSettler, type Settlement, type TabSettler } from "./settle.js";
export type { TabsConfig, TabsDeps } from "./types.js";
export type { TabOnPage } from "./view.js";

import type { Chains } from "../../chains/index.js";
import type { PaymentPauses, SignerRegistry, TabStore } from "../ports/index.js";
import { TabDesk } from "./desk.js";
import { TabKeeper } from "./keeper.js";
import type { TabsConfig } from "./types.js";

/** What the composition root gives for tabs (the networks and their assets come from payments). */
export interface TabsOptions {
  store: TabStore;
  config: Omit<TabsConfig, "assets" | "rpcUrls">;
}

export function createTabs(
  options: TabsOptions,
  shared: Pick<TabsConfig, "assets" | "rpcUrls">,
  chains: Chains,
  signers: Pick<SignerRegistry, "draftFor">,
  now: () => Date,
  onError?: (error: unknown, context: string) => void,
  pauses?: PaymentPauses,
): { desk: TabDesk; keeper: TabKeeper } {
  const config: TabsConfig = { ...options.config, ...shared };
  const deps = { store: options.store, chains, signers, now, ...(pauses ? { pauses } : {}) };
  const keeper = new TabKeeper(config, deps, onError);
  return { desk: new TabDesk(config, deps, keeper), keeper };
}
export { signTransfer, transferRequirement } from "./transfer.js";
