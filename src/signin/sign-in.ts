import { createHash, randomBytes } from "node:crypto";
import { ChainUnreadable, parseWallet, verifyWalletMessage } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import {
  SIGN_IN_CHAIN_ID,
  SIGN_IN_STATEMENT,
  type SignInChallenge,
  type SignInFields,
  type SignInRequest,
  signatureTypeOf,
  signInMessage,
  WALLET_SESSION_PREFIX,
  type Wallet,
  type WalletSession,
} from "../protocol/index.js";
import type { IssuedNonce, SignInStore } from "./port.js";

/**
 * Signing in with a wallet (docs/protocol.md, "Signing in with a wallet"): the service issues a
 * Sign-In-With-X message for one wallet on one chain (a nonce it keeps, five minutes), the wallet
 * signs its text, and the signature opens a session (12 h) whose token reads that wallet's payment
 * history and nothing else. The token is random and kept only as its SHA-256.
 */
export interface WalletSignInDeps {
  /** This service's origin (PUBLIC_URL): the message's `uri`, and its host is the `domain`. */
  publicUrl: string;
  /**
   * Other sites whose pages sign in to this service (CORS_ORIGINS): a message asked from one of
   * them (its `Origin`) names it, as a wallet compares the message with the page that asks.
   */
  origins?: readonly string[];
  store: SignInStore;
  /** EVM networks' RPCs: a contract wallet signs in on a chain listed here (EIP-1271, EIP-6492). */
  rpcUrls?: Record<string, string>;
  now?: () => Date;
  /** How long a message may be signed after it was issued; default 5 minutes. */
  messageTtlMs?: number;
  /** How long a session lasts; default 12 hours. */
  sessionTtlMs?: number;
}

/** The wallet a session token reads the history of. */
export interface SessionWallet {
  wallet: string;
  expiresAt: Date;
}

const MESSAGE_TTL_MS = 5 * 60_000;
const SESSION_TTL_MS = 12 * 3_600_000;

const hashToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

/** A wallet address and chain id that go together, canonical; AppError 400 otherwise. */
function walletOn(address: string, chainId: string): Wallet {
  const parsed = parseWallet(address);
  if (!parsed.ok)
    throw new AppError("invalid_wallet", `address: ${parsed.reason}.`, {
      fields: [{ path: "address", message: parsed.reason }],
    });
  const family = chainId.startsWith("solana:") ? "solana" : "evm";
  if (!SIGN_IN_CHAIN_ID.test(chainId) || parsed.wallet.chain !== family) {
    const message = `a CAIP-2 chain id of the wallet's family (${parsed.wallet.chain === "evm" ? "eip155:<id>" : "solana:<reference>"})`;
    throw new AppError("invalid_request", `chainId: ${message}.`, { fields: [{ path: "chainId", message }] });
  }
  return parsed.wallet;
}

export class WalletSignIn {
  private readonly origin: string;
  /** The sites a message may name: this service's, then the other pages'. */
  private readonly sites: Set<string>;
  private readonly now: () => Date;

  constructor(private readonly deps: WalletSignInDeps) {
    this.origin = new URL(deps.publicUrl).origin;
    this.sites = new Set([this.origin, ...(deps.origins ?? []).map((o) => new URL(o).origin)]);
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * A message for this wallet to sign, with a nonce kept until it is used or expires. It names the
   * asking page's site (`origin`, the request's Origin) when that is one of this service's, else
   * this service's own (a program, or a page elsewhere).
   */
  async challenge(input: { address: string; chainId: string }, origin?: string): Promise<SignInChallenge> {
    const wallet = walletOn(input.address, input.chainId);
    const issuedAt = this.now();
    const expiresAt = new Date(issuedAt.getTime() + (this.deps.messageTtlMs ?? MESSAGE_TTL_MS));
    const issued: IssuedNonce = {
      nonce: randomBytes(16).toString("hex"),
      origin: origin !== undefined && this.sites.has(origin) ? origin : this.origin,
      address: wallet.address,
      chainId: input.chainId,
      issuedAt,
      expiresAt,
    };
    await this.deps.store.issue(issued);
    const fields = this.fieldsOf(issued);
    return { ...fields, message: signInMessage(fields) };
  }

  /**
   * Checks the signed message and opens a session. Every refusal is an AppError with its own code:
   * another service's message (`signin_wrong_domain`), past its expiry (`signin_expired`), a nonce
   * unknown or already used (`signin_nonce_used`), another wallet or chain than the nonce's
   * (`signin_wrong_address`), a signature that is not the wallet's over the issued text
   * (`signin_bad_signature`). The nonce is spent by any attempt that reaches it, except one whose
   * chain could not be read (`signin_chain_unavailable`): nothing was judged, and it can be retried.
   */
  async signIn(request: SignInRequest): Promise<WalletSession> {
    const wallet = walletOn(request.address, request.chainId);
    const now = this.now();
    const site = this.siteOf(request.uri);
    if (site === undefined || request.domain !== new URL(site).host)
      throw new AppError("signin_wrong_domain", `This message is for ${request.domain}, not this service.`);
    const expiry = new Date(request.expirationTime);
    if (Number.isNaN(expiry.getTime()) || expiry <= now)
      throw new AppError("signin_expired", "The message has expired: ask for a new one.");
    const issued = await this.deps.store.take(request.nonce, now);
    if (!issued)
      throw new AppError(
        "signin_nonce_used",
        "This nonce is unknown, expired or used: ask for a new message.",
      );
    if (issued.address !== wallet.address || issued.chainId !== request.chainId)
      throw new AppError("signin_wrong_address", "The nonce was issued for another wallet or chain.");
    if (issued.origin !== site)
      throw new AppError("signin_wrong_domain", `The nonce was issued for ${new URL(issued.origin).host}.`);
    // What must be signed is the text as issued, rebuilt from what the service kept; a body that
    // says otherwise (a later expiry, another statement) is not that message.
    const fields = this.fieldsOf(issued);
    const altered = (["issuedAt", "expirationTime", "statement", "type"] as const).find(
      (key) => request[key] !== fields[key],
    );
    if (altered)
      throw new AppError(
        "invalid_request",
        `${altered} is not as issued: send the fields the nonce came with.`,
        {
          fields: [{ path: altered, message: "not as issued" }],
        },
      );
    const message = signInMessage(fields);
    if (!(await this.verify(wallet, request.chainId, message, request.signature, issued)))
      throw new AppError(
        "signin_bad_signature",
        "The signature is not this wallet's over the issued message.",
      );
    const token = `${WALLET_SESSION_PREFIX}${randomBytes(32).toString("base64url")}`;
    const expiresAt = new Date(now.getTime() + (this.deps.sessionTtlMs ?? SESSION_TTL_MS));
    await this.deps.store.openSession({
      tokenHash: hashToken(token),
      wallet: wallet.address,
      chainId: request.chainId,
      createdAt: now,
      expiresAt,
    });
    return {
      token,
      wallet: wallet.address,
      chainId: request.chainId,
      scope: "history",
      expiresAt: expiresAt.toISOString(),
    };
  }

  /** Signs out: the session token reads nothing more, on any instance. False when it was none. */
  async signOut(token: string): Promise<boolean> {
    if (!token.startsWith(WALLET_SESSION_PREFIX)) return false;
    return this.deps.store.closeSession(hashToken(token));
  }

  /** The wallet of a session token; undefined for anything else (not one, unknown, expired). */
  async session(token: string): Promise<SessionWallet | undefined> {
    if (!token.startsWith(WALLET_SESSION_PREFIX)) return undefined;
    const found = await this.deps.store.session(hashToken(token), this.now());
    return found ? { wallet: found.wallet, expiresAt: found.expiresAt } : undefined;
  }

  private fieldsOf(issued: IssuedNonce): SignInFields {
    return {
      domain: new URL(issued.origin).host,
      uri: issued.origin,
      version: "1",
      chainId: issued.chainId,
      type: signatureTypeOf(issued.chainId),
      nonce: issued.nonce,
      issuedAt: issued.issuedAt.toISOString(),
      expirationTime: issued.expiresAt.toISOString(),
      statement: SIGN_IN_STATEMENT,
      address: issued.address,
    };
  }

  /** The site a message's `uri` names, when it is one of this service's. */
  private siteOf(uri: string): string | undefined {
    try {
      const origin = new URL(uri).origin;
      return this.sites.has(origin) ? origin : undefined;
    } catch {
      return undefined;
    }
  }

  private async verify(
    wallet: Wallet,
    chainId: string,
    message: string,
    signature: string,
    issued: IssuedNonce,
  ): Promise<boolean> {
    const rpcUrls = this.deps.rpcUrls ?? {};
    const rpcUrl = wallet.chain === "evm" && Object.hasOwn(rpcUrls, chainId) ? rpcUrls[chainId] : undefined;
    try {
      return await verifyWalletMessage(wallet.chain, { address: wallet.address, message, signature }, rpcUrl);
    } catch (error) {
      if (!(error instanceof ChainUnreadable)) throw error;
      // Nothing was judged: the nonce is given back, so the same signed message can be sent again.
      await this.deps.store.issue(issued);
      throw new AppError("signin_chain_unavailable", `The RPC of ${chainId} did not answer; try again.`);
    }
  }
}
