export * from "./request.js";
export * from "./stream.js";
export { type Wallet, parseWallet } from "./wallet.js";
