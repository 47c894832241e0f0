import type { SignInWallet } from "../../../src/client/index.js";
import type { ApprovalAnswer, PaymentUpdate } from "../chat/types.js";

export type ChainKind = "evm" | "solana";

/** What the page knows of the payment's network that the update does not say. */
export interface ApproveContext {
  /** The network is the service's embedded devnet (a local node, even with a public genesis id). */
  local: boolean;
}

/** A connected wallet: who pays, and how it answers a payment that awaits approval. */
export interface PageWallet {
  /** The option it was connected from. */
  optionId: string;
  name: string;
  icon?: string;
  chain: ChainKind;
  address: string;
  /**
   * Sign what a payment awaiting approval asks (`payment.approval.sign`; the wallet shows its own
   * prompt); resolves with the next request's `approval`.
   */
  approve(payment: PaymentUpdate, context: ApproveContext): Promise<ApprovalAnswer>;
  /**
   * Signs the service's sign-in message, so that the Payments view lists what this wallet paid
   * (docs/clients.md, "Signing in with a wallet"); absent when the wallet cannot sign a message.
   */
  signIn?: SignInWallet;
}

/** A wallet the page found (EIP-6963, window.ethereum, the Wallet Standard, or the devnet's test wallets). */
export interface WalletOption {
  id: string;
  name: string;
  icon?: string;
  chain: ChainKind;
  source: "eip6963" | "injected" | "wallet-standard" | "devnet";
  connect(): Promise<PageWallet>;
}
