/**
 * Wallet sign-in (docs/protocol.md, "Signing in with a wallet"): a Sign-In-With-X message issued
 * for a wallet, its signature checked, and a session whose token reads that wallet's payment
 * history. The HTTP routes are src/http/wallet-auth.ts; the store port is implemented by src/store.
 */
export { parseChallengeInput, parseSignInRequest } from "./input.js";
export { MemorySignInStore } from "./memory.js";
export type { IssuedNonce, SessionRecord, SignInStore } from "./port.js";
export { type SessionWallet, WalletSignIn, type WalletSignInDeps } from "./sign-in.js";
