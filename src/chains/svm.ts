import { createPrivateKey, createPublicKey } from "node:crypto";
import {
  type Address,
  address,
  type Blockhash,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  isAddress,
  isOffCurveAddress,
  type SignatureBytes,
  type Transaction,
  type TransactionPartialSigner,
  verifySignature,
} from "@solana/kit";
import { DEFAULT_ASSETS, V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmSchemeV1 } from "@x402/svm/v1";
import { z } from "zod/v4";
import { wrapScheme } from "./scheme-wrap.js";
import {
  BLOCKHASH_SECONDS,
  type SvmAuthorization,
  solanaBlockhash,
  solanaMemo,
  solanaMessageHash,
  solanaResolver,
  solanaSigner,
} from "./svm-landed.js";
import { PROGRAMS } from "./svm-programs.js";
import { isAssociatedTokenAccount, solanaTokenTransfers } from "./svm-signed.js";
import { svmOwnTransfers } from "./svm-transfers.js";
import { uniqueTransactions } from "./svm-unique.js";
import { ApprovalLapsed, type ChainFamily, type SchemeClient, WalletAnswerMismatch } from "./types.js";

export { solanaMessageHash } from "./svm-landed.js";

/**
 * Solana (CAIP-2 `solana:<genesis hash prefix>`), paid with the SPL `TransferChecked` transaction
 * the x402 SVM exact scheme builds, the facilitator co-signing as fee payer (docs/payments.md).
 */

export interface SolanaKey {
  chain: "solana";
  secretKey: Uint8Array;
  tokens: string[];
}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const RPC_TIMEOUT_MS = 5000;
/**
 * How long a wallet has to approve a Solana payment: a transaction lives as long as its blockhash
 * (150 slots, about 60 s at 400 ms a slot), less a margin to submit it.
 */
const APPROVAL_SECONDS = 50;

function decodeWire(base64: string): Transaction {
  return getTransactionDecoder().decode(Buffer.from(base64, "base64"));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function usdcTable(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [network, assets] of Object.entries(DEFAULT_ASSETS)) {
    const usdc = assets.filter((a) => a.decimals === 6 && a.symbol === "USDC");
    if (usdc.length > 0) out[network] = usdc.map((a) => a.asset);
  }
  return out;
}

const timeout = () => ({ abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) });

/**
 * The blockhash a payment is signed with comes from our own RPC, never the seller's offer. The SDK
 * takes `extra.recentBlockhash` as given: a stale or invented one makes a transaction that cannot
 * land, its budget held until the reconciler proves it failed. Without the hint the SDK reads the
 * latest blockhash itself; the seller still matches the payload (it is one of the SDK's dynamic
 * fields, left out of the comparison).
 */
function ownBlockhash(scheme: SchemeClient): SchemeClient {
  return wrapScheme(scheme, (inner, version, requirements, context) => {
    const { recentBlockhash: _hash, lastValidBlockHeight: _height, ...extra } = requirements.extra ?? {};
    return inner(version, { ...requirements, extra }, context);
  });
}

/** The SDK's v2 and v1 exact schemes for `signer`, each signing with our own blockhash. */
function exactSchemes(signer: TransactionPartialSigner, rpcUrl: string | undefined) {
  const config = rpcUrl ? { rpcUrl } : undefined;
  // Never one transaction for two payments (a seller's fixed memo): svm-unique.ts.
  return {
    v2: uniqueTransactions(ownBlockhash(new ExactSvmScheme(signer, config))),
    v1: uniqueTransactions(ownBlockhash(new ExactSvmSchemeV1(signer, config))),
  };
}

/** PKCS#8's wrapping of a 32-byte ed25519 private key (RFC 8410), to read its public key. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** solana-keygen's 64 bytes (private seed, then public key) of the ed25519 key made from `seed`. */
function keypairBytes(seed: Uint8Array): Uint8Array {
  const key = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const publicKey = createPublicKey(key).export({ format: "der", type: "spki" }).subarray(-32);
  return Uint8Array.from(Buffer.concat([seed, publicKey]));
}

export const svm: ChainFamily<SolanaKey> = {
  name: "solana",
  namespace: "solana",
  v1Networks: Object.freeze({ ...V1_TO_V2_NETWORK_MAP }),
  usdc: Object.freeze(usdcTable()),

  // Base58 of 32 bytes on the ed25519 curve: a program-derived address cannot sign, so it cannot pay.
  // Nor can a program: one the service's transactions call, as their fee payer, cannot even be built.
  parseAddress(input) {
    if (!BASE58.test(input)) return undefined;
    if (!isAddress(input)) return { ok: false, reason: "a Solana address is base58 of 32 bytes" };
    if (PROGRAMS.has(input))
      return { ok: false, reason: "this Solana address is a program's, not a wallet's" };
    if (isOffCurveAddress(input)) {
      return {
        ok: false,
        reason: "this Solana address is off the ed25519 curve (a program-derived address cannot sign)",
      };
    }
    return { ok: true, address: input };
  },

  payeeProblem(payTo) {
    if (!BASE58.test(payTo) || !isAddress(payTo)) return "a Solana address is base58 of 32 bytes";
    if (PROGRAMS.has(payTo)) return "this Solana address is a program's, which holds no tokens";
    return undefined;
  },

  canonicalAsset: (asset) => asset,
  // Base58 is case-sensitive: addresses differing only in case are different accounts.
  samePayee: (a, b) => a === b,

  keySchema: z.strictObject({
    chain: z.literal("solana"),
    secretKey: z
      .array(z.number().int().min(0).max(255))
      .length(64, "64 bytes (solana-keygen JSON)")
      .transform((bytes) => Uint8Array.from(bytes)),
    tokens: z.array(z.string().min(16)).min(1),
  }),

  keyFromSeed: (seed) => ({
    chain: "solana",
    secretKey: keypairBytes(seed),
    tokens: ["a tab's session key: no token"],
  }),

  async loadKey(key) {
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    return {
      address: signer.address,
      schemesFor: (_network, rpcUrl) => exactSchemes(signer, rpcUrl),
    };
  },

  connect(rpcUrl) {
    const rpc = createSolanaRpc(rpcUrl);
    const resolver = solanaResolver(rpcUrl);

    return {
      async balance(asset, owner) {
        const accounts = await rpc
          .getTokenAccountsByOwner(
            address(owner),
            { mint: address(asset) },
            { encoding: "jsonParsed", commitment: "confirmed" },
          )
          .send(timeout());
        return accounts.value.reduce(
          (sum, a) =>
            sum +
            BigInt(
              (a.account.data as { parsed: { info: { tokenAmount: { amount: string } } } }).parsed.info
                .tokenAmount.amount,
            ),
          0n,
        );
      },

      // Settled when a transaction with its message landed; failed only when the chain proves it
      // can no longer land and the payer's history since signing holds none (svm-landed.ts).
      resolve: (payment, now) => resolver.resolve(payment, now),
      confirm: (payment, transaction) => resolver.confirm(payment, transaction),

      // A tab's session key needs its token account opened before it can be paid (svm-transfers.ts).
      own: svmOwnTransfers(rpc),

      async ping(signal) {
        await rpc.getSlot().send({ abortSignal: signal });
      },

      async blockhashValid(blockhash) {
        return (await rpc.isBlockhashValid(blockhash as Blockhash).send(timeout())).value;
      },
    };
  },

  // The SDK builds the transaction and asks the payer's signer to partially sign it: the stand-in
  // signs nothing, so the wallet receives the transaction with empty signature slots.
  draftForWallet(owner, _network, rpcUrl) {
    const signer: TransactionPartialSigner = {
      address: address(owner),
      async signTransactions(transactions) {
        return transactions.map(() => ({}));
      },
    };
    return {
      schemes: exactSchemes(signer, rpcUrl),
      request(payload) {
        const wire = (payload.payload as { transaction?: unknown }).transaction;
        if (typeof wire !== "string") throw new Error("the Solana scheme built no transaction");
        return { kind: "solana-transaction", method: "signTransaction", transaction: wire };
      },
      expiresAt: (_payload, now) => now + APPROVAL_SECONDS,
    };
  },

  // The wallet's transaction must carry exactly the stored message, signed by the wallet's key;
  // only that one signature is taken over into the stored transaction.
  async completeForWallet(payload, request, answer, wallet, chain) {
    if (request.kind !== "solana-transaction" || !("transaction" in answer)) {
      throw new WalletAnswerMismatch("a Solana payment is approved with the signed transaction");
    }
    let signed: Transaction;
    try {
      signed = decodeWire(answer.transaction);
    } catch {
      throw new WalletAnswerMismatch("the signed transaction cannot be decoded");
    }
    const stored = decodeWire(request.transaction);
    if (!sameBytes(new Uint8Array(signed.messageBytes), new Uint8Array(stored.messageBytes))) {
      throw new WalletAnswerMismatch(
        "the signed transaction differs from the one to approve (amount, payee, blockhash or instructions)",
      );
    }
    const key = wallet as Address;
    const signature = signed.signatures[key];
    if (!signature || signature.every((b) => b === 0)) {
      throw new WalletAnswerMismatch("the transaction carries no signature of this wallet");
    }
    const publicKey = await getPublicKeyFromAddress(key);
    if (!(await verifySignature(publicKey, signature as SignatureBytes, stored.messageBytes))) {
      throw new WalletAnswerMismatch("the wallet's signature does not verify over the transaction");
    }
    // Signed within the window shown, but a blockhash can expire sooner (the devnet's lives 12 s):
    // sent, it would only fail and hold the budget until the chain proves it never landed.
    const blockhash = solanaBlockhash(new Uint8Array(Buffer.from(request.transaction, "base64")));
    const valid = chain?.blockhashValid ? await chain.blockhashValid(blockhash).catch(() => true) : true;
    if (!valid) throw new ApprovalLapsed("the transaction's blockhash has expired on chain");
    const completed = { ...stored, signatures: { ...stored.signatures, [key]: signature } } as Transaction;
    return {
      ...payload,
      payload: { ...(payload.payload as object), transaction: getBase64EncodedWireTransaction(completed) },
    };
  },

  // The SDK builds the transaction from the chosen requirement; keep what finds it later and what
  // says when it can no longer land (its blockhash), never its signatures.
  authorization(payload, expected, now) {
    const wire = (payload.payload as { transaction?: unknown }).transaction;
    if (typeof wire !== "string") throw new Error("the signed Solana payload holds no transaction");
    const bytes = Buffer.from(wire, "base64");
    // Defence in depth, as EVM's: one transfer, of the amount and token quoted, to the payee's
    // associated token account (the scheme builds it so).
    const moved = solanaTokenTransfers(bytes);
    // Zero moves no token: a spent tab's return only closes its account and sends its SOL back.
    const none = expected.amount === 0n && moved.length === 0;
    const one = moved.length === 1 ? moved[0] : undefined;
    if (!none && (!one || one.amount !== expected.amount || one.mint !== expected.asset))
      throw new Error("signed transfer differs from the quote");
    if (one && !isAssociatedTokenAccount(one.destination, expected.payTo, one.program, one.mint))
      throw new Error("signed recipient differs from the quote");
    const memo = solanaMemo(bytes);
    const signer = solanaSigner(bytes);
    return {
      kind: "svm-exact",
      expiresAt: String(now + Math.max(expected.maxTimeoutSeconds, BLOCKHASH_SECONDS)),
      messageHash: solanaMessageHash(bytes),
      blockhash: solanaBlockhash(bytes),
      signedAt: String(now),
      ...(memo ? { memo } : {}),
      ...(signer ? { signer } : {}),
    } satisfies SvmAuthorization;
  },
};
