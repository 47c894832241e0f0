import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { type Chains, familyOf, type NetworkSchemes } from "../../chains/index.js";
import type { TabRecord } from "../ports/index.js";
import type { Requirement } from "../rules/index.js";
import { type PaymentDemand, type SignedPayment, signOffer } from "../x402/index.js";
import type { SessionKey } from "./keys.js";
import type { Settlement, TabSettler } from "./settle.js";

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

/** The wallet's funding of a tab, unsigned: an x402 `exact` payment, or the family's own transaction. */
export async function unsignedFunding(
  chains: Pick<Chains, "connection">,
  requirement: Requirement,
  from: { address: string; schemes: NetworkSchemes },
  resource: { url: string; description: string },
  nowS: number,
  memo: string,
): Promise<PaymentPayload> {
  const own = chains.connection(requirement.network)?.own;
  if (!own) return (await signTransfer(requirement, from.schemes, resource, nowS)).payload;
  const transaction = await own.funding(
    from.address,
    requirement.payTo,
    requirement.asset,
    BigInt(requirement.amount),
    memo,
  );
  return ownPayload(requirement, transaction, resource);
}

/** A tab's transfer, signed, not sent: what it moves, and what finds it on chain later. */
export interface SignedTransfer {
  payload: PaymentPayload;
  requirement: Requirement;
  amount: bigint;
  authorization: Record<string, string>;
}

/**
 * Everything a tab's session key holds, back to the wallet, signed by the key; undefined when it
 * holds nothing. An x402 `exact` payment of its balance, or the family's own transaction (which
 * also returns what opening the key's token account cost).
 */
export async function signedReturn(
  chains: Pick<Chains, "connection" | "balance">,
  tab: { network: string; asset: string; wallet: string; session: string },
  key: SessionKey,
  resource: { url: string; description: string },
  windowSeconds: number,
  nowS: number,
  memo: string,
): Promise<SignedTransfer | undefined> {
  const own = chains.connection(tab.network)?.own;
  if (!own) {
    const balance = await chains.balance(tab.network, tab.asset, tab.session);
    if (balance === 0n) return undefined;
    const requirement = await transferRequirement(
      chains,
      tab.network,
      tab.asset,
      tab.wallet,
      balance,
      windowSeconds,
    );
    const signed = await signTransfer(requirement, key.signer.schemeFor(tab.network), resource, nowS);
    return { payload: signed.payload, authorization: signed.authorization, requirement, amount: balance };
  }
  const back = await own.returnAll(key.seed, tab.wallet, tab.asset, memo);
  if (!back) return undefined;
  const requirement: Requirement = {
    scheme: "exact",
    network: tab.network,
    asset: tab.asset,
    payTo: tab.wallet,
    amount: back.amount.toString(),
    maxTimeoutSeconds: windowSeconds,
  };
  const payload = ownPayload(requirement, back.transaction, resource);
  const family = familyOf(tab.network);
  if (!family) throw new Error(`no chain family for ${tab.network}`);
  const expected = {
    amount: back.amount,
    payTo: tab.wallet,
    asset: tab.asset,
    maxTimeoutSeconds: windowSeconds,
  };
  return {
    payload,
    requirement,
    amount: back.amount,
    authorization: family.authorization(payload, expected, nowS),
  };
}

/** Send a tab's own transfer: to the facilitator, or to the chain where the family sends its own. */
export async function settleTransfer(
  chains: Pick<Chains, "connection">,
  settler: TabSettler,
  payload: PaymentPayload,
  requirement: Requirement,
): Promise<Settlement> {
  const own = chains.connection(requirement.network)?.own;
  if (!own) return settler.settle(payload, requirement);
  const transaction = (payload.payload as { transaction?: unknown }).transaction;
  if (typeof transaction !== "string") throw new Error("a tab's own transfer holds no transaction");
  const sent = await own.send(transaction);
  if (sent.kind === "landed") return { kind: "settled", transaction: sent.transaction };
  return sent.kind === "rejected" ? { kind: "refused", error: sent.error } : sent;
}

/** A family's own transaction in a payload's shape, so the wallet and authorization checks apply. */
function ownPayload(
  requirement: Requirement,
  transaction: string,
  resource: { url: string; description: string },
): PaymentPayload {
  return {
    x402Version: 2,
    resource: { ...resource, mimeType: "application/json" },
    accepted: requirement,
    payload: { transaction },
  } as unknown as PaymentPayload;
}

/**
 * Whether a tab's funding landed in its session key, as the chain says now: `open` when its
 * authorization is used and the key holds the amount (a cancelled EIP-3009 nonce reads as used
 * too: h53, h54), `failed` when it never can, undefined while it still may.
 */
export async function fundingLanded(
  chains: Pick<Chains, "resolve" | "balance">,
  tab: Pick<TabRecord, "network" | "asset" | "wallet" | "session" | "amount" | "createdAt">,
  authorization: unknown,
  now: Date,
): Promise<{ open: true; txHash?: string } | { open: false; error: string } | undefined> {
  const { network, asset, wallet, createdAt } = tab;
  const found = await chains.resolve({ network, asset, wallet, authorization, createdAt }, now);
  if (found.status === "failed") return { open: false, error: found.error };
  if (found.status !== "settled") return undefined;
  if ((await chains.balance(network, asset, tab.session)) < tab.amount)
    return { open: false, error: "its authorization was used, not paid in" };
  return { open: true, ...(found.txHash ? { txHash: found.txHash } : {}) };
}
