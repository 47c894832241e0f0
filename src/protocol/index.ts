export { cleanText, cleanUntrusted } from "./content.js";
export { type PaymentState, paymentStateSchema } from "./payment.js";
export * from "./request.js";
export * from "./status.js";
export * from "./stream.js";
export { parseWallet, type Wallet } from "./wallet.js";
