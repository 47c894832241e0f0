import type { Wallet } from "../../protocol/index.js";
import type { SignerAccess, SignerRegistry } from "../ports/index.js";
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
