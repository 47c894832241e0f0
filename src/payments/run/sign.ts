import type { Wallet } from "../../protocol/index.js";
import { SameTransactionError, type SignerAccess, type SignerRegistry } from "../ports/index.js";
import type { ChosenOffer } from "../rules/index.js";
import { type PaymentDemandProbe, type SignedPayment, signOffer } from "../x402/index.js";
import type { PaymentRequest } from "./pipeline-types.js";

/**
 * Sign the chosen offer in memory, bounded in time (a Solana signature needs a recent blockhash
 * from the node, which may hang); undefined when it fails, with the cause given to `onError`.
 */
export async function signBounded(
  probed: PaymentDemandProbe,
  chosen: ChosenOffer,
  signer: SignerAccess,
  timeoutMs: number,
  onError?: (error: unknown, context: string) => void,
): Promise<SignedPayment | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("signing timed out")), timeoutMs);
  });
  try {
    const signing = signOffer(probed.demand, chosen.index, signer.schemeFor(chosen.offer.network), {
      amount: chosen.amount,
      payTo: chosen.offer.payTo,
      maxTimeoutSeconds: chosen.timeoutSeconds,
    });
    return await Promise.race([signing, timeout]);
  } catch (error) {
    onError?.(error, "signing");
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How many times a payment is signed anew when another payment holds its very transaction. Each
 * build waits for the next blockhash, and across instances one blockhash carries one payment of an
 * offer with a fixed memo, so payments of it in a burst queue for blockhashes.
 */
const SIGN_ANEW = 10;

/**
 * Reserve with the signed intent (`reserve`'s answer), and what was signed. A Solana transaction
 * another payment already holds (the ledger's SameTransactionError: the same offer signed within
 * one blockhash on another instance) is signed anew, which waits for the next blockhash
 * (src/chains/svm-unique.ts), at most {@link SIGN_ANEW} times; past that, or when signing anew
 * fails, the answer is `{ unsigned: true }` (nothing was written or sent). Other errors pass.
 */
export async function reserveSigned<R>(
  first: SignedPayment,
  sign: () => Promise<SignedPayment | undefined>,
  reserve: (authorization: Record<string, string>) => Promise<R>,
): Promise<{ signed: SignedPayment; answer: R } | { unsigned: true }> {
  let signed = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return { signed, answer: await reserve(signed.authorization) };
    } catch (error) {
      if (!(error instanceof SameTransactionError)) throw error;
      const again = attempt < SIGN_ANEW ? await sign() : undefined;
      if (!again) return { unsigned: true };
      signed = again;
    }
  }
}

/**
 * The server-held key this request may sign with for the wallet, if any. A lookup that failed is
 * kept, not thrown: it surfaces only for a payment admission lets go on (as the run's crash).
 */
export function findKey(
  signers: SignerRegistry,
  request: PaymentRequest,
  wallet: Wallet,
): Promise<{ signer?: SignerAccess } | { signer?: undefined; error: unknown }> {
  return signers.find(wallet, request).then(
    (found) => (found.ok ? { signer: found.signer } : {}),
    (error: unknown) => ({ error }),
  );
}
