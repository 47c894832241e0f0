export type { ValidatedApproval } from "./approval-answer.js";
export type { ApprovalView } from "./approval-view.js";
export { utcClock } from "./clock.js";
export { cleanText, cleanUntrusted, textCleaner, withoutUnsafe } from "./content.js";
export { explorerTxUrl } from "./explorer.js";
export { APPROVE_PATH, PAYMENT_ID, TAB_ID } from "./ids.js";
export { nestsAtMost, parseJsonAmountsAsWritten, sortedKeys } from "./json.js";
export { LIMITS_RULE } from "./limits-rule.js";
export { DEFAULT_MODEL, MODEL_ALIASES, type ModelAlias } from "./models.js";
export { NETWORK_NAMES, networkLabel } from "./networks.js";
export { parsePageApproval } from "./page-answer.js";
export {
  type PaymentHistoryItem,
  type PaymentHistoryPage,
  type PaymentState,
  paymentHistoryItemSchema,
  paymentHistorySchema,
  paymentStateSchema,
} from "./payment.js";
export * from "./request.js";
export type { ApprovalAnswer, ChatRequestBody, SpendingLimits, Usd } from "./request-body.js";
export * from "./sign-in.js";
export * from "./status.js";
export * from "./stream.js";
export {
  type FundTabBody,
  type OpenTabBody,
  type OpenTabRequest,
  parseCloseTab,
  parseFundTab,
  parseOpenTab,
  parsePageFund,
  parseTabToken,
  type TabOpened,
  type TabStatusName,
  type TabView,
} from "./tab.js";
export {
  type ChainName,
  WALLET_CHAINS,
  type Wallet,
  type WalletCheck,
  type WalletParse,
  walletSyntax,
} from "./wallet.js";
