export { cleanText, cleanUntrusted } from "./content.js";
export { explorerTxUrl } from "./explorer.js";
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
export * from "./status.js";
export * from "./stream.js";
export { parseWallet, type Wallet } from "./wallet.js";
