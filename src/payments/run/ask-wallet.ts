import { ChainUnreadable, WalletCannotPay } from "../../chains/index.js";
import { networkLabel } from "../../protocol/index.js";
import {
  type SignerAccess,
  type SignerRegistry,
  type StoredApproval,
  storeGrant,
  storeLimits,
} from "../ports/index.js";
import { type ChosenOffer, type Committed, checkSpend, type PaymentOutcome } from "../rules/index.js";
import type { PaymentDemandProbe, SignedPayment } from "../x402/index.js";
import { refuseIfShort } from "./balances.js";
import { type Admitted, type PaymentRequest, refuseOverLimit } from "./pipeline-types.js";

/** The pipeline's own steps a wallet's payment reuses (pipeline.ts). */
export interface WalletAskSteps {
  signers: Pick<SignerRegistry, "draftFor">;
  /** The `quoted` update with the budget meter; what is committed, when it could be read. */
  announce(admitted: Admitted): Promise<Committed | undefined>;
  committed(request: PaymentRequest): Promise<Committed>;
  sign(
    probed: PaymentDemandProbe,
    chosen: ChosenOffer,
    signer: SignerAccess,
  ): Promise<SignedPayment | undefined>;
}

/**
 * Stop before signing and ask the user's wallet (docs/payments.md, "Approval"). Everything a
 * payment must pass runs first (offer, allow-lists, the amount limits as they stand, the balance),
 * so the user is never asked to sign what policy would refuse. The SDK builds the payment as for
 * a held key, with a stand-in signer; the row is stored with what the wallet signs, and holds no
 * budget until the approval reserves it.
 */
export async function askWallet(steps: WalletAskSteps, admitted: Admitted): Promise<PaymentOutcome> {
  const { run, request, wallet, limits, probed, chosen, balances } = admitted;
  const { offer, amount } = chosen;
  const draft = steps.signers.draftFor(wallet, offer.network);
  const [read, balance, signed, cannotPay] = await Promise.all([
    steps.announce(admitted),
    balances.of(offer, amount),
    steps.sign(probed, chosen, { schemeFor: () => draft.schemes }),
    // A smart-contract wallet is never asked to sign for a token that could not check it.
    draft.assertCanPay?.(offer.asset).then(
      () => undefined,
      (error: unknown) => error,
    ),
  ]);
  const committed = read ?? (await steps.committed(request));
  const check = checkSpend(amount, limits, committed);
  if (!check.ok) return refuseOverLimit(run, check);
  const poor = refuseIfShort(run, balance, amount, offer.network);
  if (poor) return poor;
  if (cannotPay instanceof WalletCannotPay) {
    return run.refuse("wallet_unsupported", cannotPay.message, { reason: cannotPay.reason });
  }
  if (cannotPay instanceof ChainUnreadable) {
    return run.fail(
      "chain_unreadable",
      `Could not read the wallet on ${networkLabel(offer.network)}; nothing was asked or paid.`,
    );
  }
  if (cannotPay) throw cannotPay;
  if (!signed) return run.fail("signing_failed", "The payment could not be prepared for your wallet.");
  const nowS = Math.floor(request.now() / 1000);
  const expiresS = draft.expiresAt(signed.payload, nowS);
  if (!(expiresS > nowS)) {
    return run.fail("signing_failed", "The service's payment window is too short to approve in a wallet.");
  }
  const sign = draft.request(signed.payload);
  const stored: StoredApproval = {
    ...(run.facts.serviceName ? { serviceName: run.facts.serviceName } : {}),
    // The key's caps hold when the wallet answers, wherever it answers (the approval page too).
    ...(request.grant ? { grant: storeGrant(request.grant) } : {}),
    // And the request's own limits, for an answer that brings none (the page's).
    ...(request.spendingLimits ? { limits: storeLimits(request.spendingLimits) } : {}),
    payload: signed.payload,
    sign,
    target: probed.payee,
    window: chosen.timeoutSeconds,
  };
  return run.awaitApproval({
    requirement: offer,
    caller: request.caller ?? null,
    stored,
    sign,
    expiresAt: new Date(expiresS * 1000),
  });
}
