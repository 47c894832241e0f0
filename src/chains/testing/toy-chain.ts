import { createHash, createHmac } from "node:crypto";
import { getAddress } from "viem";
import { ChainUnreadable, type PaymentOnChain, type Resolution } from "../types.js";

/**
 * A chain without a chain, for tests of the payment core (test support: product code never
 * imports src/chains/testing). Balances live in memory; accounts sign with a secret the chain
 * knows, so it can check a signature; every answer is deterministic (transaction hashes and
 * nonces count up). Switches make what happens to a sent payment unclear, late or failed, and
 * make the chain unreadable, so each rule of the payment core can be driven on purpose.
 */

/** What the toy "EIP-3009" authorization of a payment says. Amounts and times are decimal strings. */
export interface ToyAuthorization {
  from: string;
  to: string;
  value: string;
  /** Unix seconds: the authorization is valid from here... */
  validAfter: string;
  /** ...until here (exclusive). */
  validBefore: string;
  nonce: string;
}

/**
 * What the chain does with the next payment handed to it for settlement:
 * - `lands`: the funds move and the facilitator reports the transaction;
 * - `refused`: nothing moves and the facilitator says why (`refusal`);
 * - `lands-unreported`: the funds move but the answer is lost (settled, and nobody said so);
 * - `late`: accepted but not yet landed: it lands when {@link ToyChain.landLate} is called.
 */
export type Landing = "lands" | "refused" | "lands-unreported" | "late";

export type Settlement =
  | { success: true; transaction: string; payer: string }
  | { success: false; errorReason: string }
  /** No answer (the payment may or may not land). */
  | undefined;

interface Sent {
  asset: string;
  authorization: ToyAuthorization;
}

export class ToyChain {
  landing: Landing = "lands";
  /** Why a `refused` payment was refused (a 402 says it to the payer). */
  refusal = "payment refused by the chain";
  /** Every read (balance, resolve, ping) throws ChainUnreadable while set. */
  unreadable = false;
  /** The next signatures throw while set (a key that cannot sign). */
  signingFails = false;
  /** Wallets that could never pay with their own signature (a contract wallet, say). */
  readonly cannotPay = new Set<string>();
  /** The checks an approval reads from the chain (can this wallet pay?) throw ChainUnreadable while set. */
  walletChecksDown = false;

  private readonly secrets = new Map<string, string>();
  private readonly balances = new Map<string, bigint>();
  private readonly landed = new Map<string, { txHash: string; payer: string; amount: bigint }>();
  private readonly inFlight = new Map<string, Sent>();
  private nonces = 0;
  private txs = 0;

  constructor(
    /** The chain's clock (epoch ms): what validity windows are judged against. */
    readonly now: () => number,
  ) {}

  /** A new account (deterministic in `label`): its EVM-shaped address and the secret it signs with. */
  account(label: string): string {
    const hex = createHash("sha256").update(`toy-account:${label}`).digest("hex").slice(0, 40);
    const address = getAddress(`0x${hex}`);
    this.secrets.set(address, createHash("sha256").update(`toy-secret:${label}`).digest("hex"));
    return address;
  }

  mint(asset: string, owner: string, amount: bigint): void {
    const key = `${asset.toLowerCase()} ${owner}`;
    this.balances.set(key, (this.balances.get(key) ?? 0n) + amount);
  }

  balanceOf(asset: string, owner: string): bigint {
    this.assertReadable();
    return this.balances.get(`${asset.toLowerCase()} ${owner}`) ?? 0n;
  }

  nextNonce(): string {
    this.nonces += 1;
    return `0x${this.nonces.toString(16).padStart(64, "0")}`;
  }

  /** `from`'s signature over an authorization (what its wallet, or a key held for it, produces). */
  sign(authorization: ToyAuthorization): `0x${string}` {
    if (this.signingFails) throw new Error("the toy signer is down");
    const secret = this.secrets.get(authorization.from);
    if (!secret) throw new Error("no toy account for that address");
    return `0x${createHmac("sha256", secret).update(canonical(authorization)).digest("hex")}`;
  }

  verify(authorization: ToyAuthorization, signature: string): boolean {
    const secret = this.secrets.get(authorization.from);
    if (!secret) return false;
    const expected = `0x${createHmac("sha256", secret).update(canonical(authorization)).digest("hex")}`;
    return signature === expected;
  }

  /** The facilitator's settle: check the signature, the window, the nonce and the funds, then {@link landing}. */
  submit(asset: string, authorization: ToyAuthorization, signature: string): Settlement {
    const nowS = Math.floor(this.now() / 1000);
    if (!this.verify(authorization, signature)) return { success: false, errorReason: "invalid signature" };
    if (this.landed.has(authorization.nonce) || this.inFlight.has(authorization.nonce)) {
      return { success: false, errorReason: "nonce already used" };
    }
    if (Number(authorization.validBefore) <= nowS || Number(authorization.validAfter) > nowS) {
      return { success: false, errorReason: "authorization outside its window" };
    }
    if (this.balanceOf(asset, authorization.from) < BigInt(authorization.value)) {
      return { success: false, errorReason: "insufficient_funds" };
    }
    switch (this.landing) {
      case "refused":
        return { success: false, errorReason: this.refusal };
      case "late":
        this.inFlight.set(authorization.nonce, { asset, authorization });
        return undefined;
      case "lands-unreported":
        this.land({ asset, authorization });
        return undefined;
      default: {
        const txHash = this.land({ asset, authorization });
        return { success: true, transaction: txHash, payer: authorization.from };
      }
    }
  }

  /** Land every `late` payment still valid and covered; returns their transaction hashes. */
  landLate(): string[] {
    const nowS = Math.floor(this.now() / 1000);
    const out: string[] = [];
    for (const [nonce, sent] of this.inFlight) {
      this.inFlight.delete(nonce);
      const { authorization } = sent;
      const covered = this.balanceOf(sent.asset, authorization.from) >= BigInt(authorization.value);
      if (Number(authorization.validBefore) > nowS && covered) out.push(this.land(sent));
    }
    return out;
  }

  /** Drop every `late` payment: they never land. */
  dropLate(): void {
    this.inFlight.clear();
  }

  /** What a reconciler asks: landed (with its transaction), never to land (expired unused), or not yet known. */
  resolve(payment: PaymentOnChain, now: Date): Resolution {
    this.assertReadable();
    const authorization = payment.authorization as Partial<ToyAuthorization> | null;
    if (!authorization?.nonce || !authorization.validBefore) {
      return { status: "pending" };
    }
    const landed = this.landed.get(authorization.nonce);
    if (landed) return { status: "settled", txHash: landed.txHash, payer: landed.payer };
    if (this.inFlight.has(authorization.nonce)) return { status: "pending" };
    if (Number(authorization.validBefore) * 1000 <= now.getTime()) {
      return { status: "failed", error: "authorization expired unused" };
    }
    return { status: "pending" };
  }

  /** Whether `transaction` is this payment's and landed: its payer, or undefined. */
  confirm(payment: PaymentOnChain, transaction: string): { payer: string } | undefined {
    this.assertReadable();
    const nonce = (payment.authorization as Partial<ToyAuthorization> | null)?.nonce;
    const landed = nonce === undefined ? undefined : this.landed.get(nonce);
    return landed?.txHash === transaction ? { payer: landed.payer } : undefined;
  }

  /** Every landed payment, in order: what a test checks was (or was not) paid. */
  transactions(): Array<{ txHash: string; payer: string; amount: bigint }> {
    return [...this.landed.values()];
  }

  assertReadable(): void {
    if (this.unreadable) throw new ChainUnreadable("the toy chain does not answer");
  }

  private land(sent: Sent): string {
    const { asset, authorization } = sent;
    const amount = BigInt(authorization.value);
    this.mint(asset, authorization.from, -amount);
    this.mint(asset, authorization.to, amount);
    this.txs += 1;
    const txHash = `0x${this.txs.toString(16).padStart(64, "0")}`;
    this.landed.set(authorization.nonce, { txHash, payer: authorization.from, amount });
    return txHash;
  }
}

/** The signed bytes: every field, in a fixed order. */
function canonical(a: ToyAuthorization): string {
  return JSON.stringify([a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce]);
}
