import type { PaymentRequired } from "@x402/core/types";
import type { Chains, NetworkSchemes } from "../../chains/index.js";
import type { Requirement } from "../rules/index.js";
import { type PaymentDemand, type SignedPayment, signOffer } from "../x402/index.js";

/**
 * A tab's own transfer as an x402 `exact` payment: the requirement (the token's `extra` read from
 * the chain), and its payload signed by `schemes` (the wallet's draft, or the session key).
 */
export async function transferRequirement(
  chains: Pick<Chains, "connection">,
  network: string,
  asset: string,
  payTo: string,
  amount: bigint,
  windowSeconds: number,
): Promise<Requirement> {
  const extra = await chains.connection(network)?.transferExtra?.(asset);
  return {
    scheme: "exact",
    network,
    asset,
    payTo,
    amount: amount.toString(),
    maxTimeoutSeconds: windowSeconds,
    ...(extra ? { extra } : {}),
  };
}

export function signTransfer(
  requirement: Requirement,
  schemes: NetworkSchemes,
  resource: { url: string; description: string },
  nowS: number,
): Promise<SignedPayment> {
  const raw = {
    x402Version: 2,
    resource: { ...resource, mimeType: "application/json" },
    accepts: [requirement],
  } as unknown as PaymentRequired;
  const demand: PaymentDemand = { version: 2, raw, offers: [requirement] };
  return signOffer(demand, 0, schemes, {
    amount: BigInt(requirement.amount),
    payTo: requirement.payTo,
    maxTimeoutSeconds: requirement.maxTimeoutSeconds,
    nowS,
  });
}
