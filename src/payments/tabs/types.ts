import type { Chains } from "../../chains/index.js";
import type { PaymentPauses, SignerRegistry, TabStore } from "../ports/index.js";
import type { TabSettler } from "./settle.js";

export interface TabsConfig {
  /** Session keys are derived from it (keys.ts): the same secret on every instance. */
  secret: Uint8Array;
  settler: TabSettler;
  /** The largest tab, atomic USD. */
  maxAmount: bigint;
  defaultSeconds: number;
  maxSeconds: number;
  /** How long the wallet has to sign the funding (its authorization's window). */
  signWindowSeconds: number;
  /** Networks tabs may be opened on (the service's, with an RPC URL), and their USD assets. */
  assets: Record<string, string[]>;
  rpcUrls: Record<string, string>;
  /** The service's own URL: the funding names it, so the wallet shows who asks. */
  publicUrl: string;
}

export interface TabsDeps {
  store: TabStore;
  chains: Pick<Chains, "connection" | "balance" | "resolve">;
  signers: Pick<SignerRegistry, "draftFor">;
  now: () => Date;
  /** The operator's kill switch and ended keys: no tab is opened or funded while they stop its caller. */
  pauses?: PaymentPauses;
}
