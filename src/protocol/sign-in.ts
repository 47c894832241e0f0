import * as z from "zod/v4-mini";
import type { Exactly, ProtocolSchema, Same } from "./schema-type.js";

/**
 * Signing in with a wallet (docs/protocol.md, "Signing in with a wallet"): a Sign-In-With-X
 * message (CAIP-122; the fields of x402's `sign-in-with-x` extension, EIP-4361's text on EVM and
 * its Solana twin), asked of `POST /api/auth/wallet/nonce`, signed by the wallet and sent back to
 * `POST /api/auth/wallet` for a session token that reads that wallet's payment history. The text is
 * built here, once, so that the service and a client agree on every byte the wallet signs.
 */

/** How the wallet signs: EIP-191 `personal_sign` on EVM, ed25519 over the message's bytes on Solana. */
export type SignInSignatureType = "eip191" | "ed25519";

/** The fields of the message the wallet signs; the service fixes all of them but the address's owner. */
export interface SignInFields {
  /** This service's host (`host[:port]`), as a wallet compares it with the page that asks. */
  domain: string;
  /** This service's origin. */
  uri: string;
  version: "1";
  /** CAIP-2: `eip155:<id>` or `solana:<genesis hash prefix>`. */
  chainId: string;
  type: SignInSignatureType;
  /** Issued by the service, good for one sign-in. */
  nonce: string;
  /** ISO-8601. */
  issuedAt: string;
  /** ISO-8601: a few minutes after `issuedAt`. */
  expirationTime: string;
  statement: string;
  /** The wallet that signs in (canonical: EIP-55 on EVM). */
  address: string;
}

/** `POST /api/auth/wallet/nonce`'s answer: the fields, and the exact text to sign. */
export interface SignInChallenge extends SignInFields {
  message: string;
}

/** `POST /api/auth/wallet`'s body: the fields as issued, and the wallet's signature of their text. */
export interface SignInRequest extends SignInFields {
  /** EVM: 0x hex (65 bytes from a plain key, longer from a contract wallet); Solana: base58, 64 bytes. */
  signature: string;
}

/** `POST /api/auth/wallet`'s answer: a bearer token that reads this wallet's payment history. */
export interface WalletSession {
  token: string;
  wallet: string;
  chainId: string;
  /** What the token may do: read the payment history (GET /api/payments, /api/payments/:id). */
  scope: "history";
  /** ISO-8601. */
  expiresAt: string;
}

/** What every wallet session token starts with (operator keys start with `x4c_`). */
export const WALLET_SESSION_PREFIX = "x4w_";

/** The statement every sign-in message carries. */
export const SIGN_IN_STATEMENT =
  "Sign in to read the payments made from this wallet. This signs no payment and costs nothing.";

/** CAIP-2 chain ids a wallet may sign in on: the namespace names the signature. */
export const SIGN_IN_CHAIN_ID = /^(eip155:[1-9][0-9]{0,19}|solana:[1-9A-HJ-NP-Za-km-z]{32,44})$/;

/** The signature a chain id's namespace takes. */
export function signatureTypeOf(chainId: string): SignInSignatureType {
  return chainId.startsWith("solana:") ? "ed25519" : "eip191";
}

/**
 * The text the wallet signs, as x402's `sign-in-with-x` writes it: EIP-4361 on EVM ("... with your
 * Ethereum account", the chain id's number), the same layout for Solana (the chain id's reference).
 */
export function signInMessage(fields: Omit<SignInFields, "type">): string {
  const solana = fields.chainId.startsWith("solana:");
  return [
    `${fields.domain} wants you to sign in with your ${solana ? "Solana" : "Ethereum"} account:`,
    fields.address,
    "",
    fields.statement,
    "",
    `URI: ${fields.uri}`,
    `Version: ${fields.version}`,
    `Chain ID: ${fields.chainId.slice(fields.chainId.indexOf(":") + 1)}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt}`,
    `Expiration Time: ${fields.expirationTime}`,
  ].join("\n");
}

const fieldsShape = {
  domain: z.string(),
  uri: z.string(),
  version: z.literal("1"),
  chainId: z.string(),
  type: z.enum(["eip191", "ed25519"]),
  nonce: z.string(),
  issuedAt: z.string(),
  expirationTime: z.string(),
  statement: z.string(),
  address: z.string(),
};
const challenge = z.object({ ...fieldsShape, message: z.string() });
const session = z.object({
  token: z.string(),
  wallet: z.string(),
  chainId: z.string(),
  scope: z.literal("history"),
  expiresAt: z.string(),
});

type _SchemasMatchTypes = [
  Exactly<Same<z.output<typeof challenge>, SignInChallenge>>,
  Exactly<Same<z.output<typeof session>, WalletSession>>,
];

export const signInChallengeSchema: ProtocolSchema<SignInChallenge> = challenge;
export const walletSessionSchema: ProtocolSchema<WalletSession> = session;
