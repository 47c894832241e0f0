import { createHash } from "node:crypto";
import { getTransactionDecoder } from "@solana/kit";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type {
  Network,
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  SettleResponse,
} from "@x402/core/types";
import type { Requirement } from "./policy.js";

/**
 * The x402 protocol, through the official SDK: read a 402 (v2 `PAYMENT-REQUIRED` header or v1 JSON
 * body), sign exactly the one requirement our policy chose, encode the header that version expects,
 * and decode the settlement response. Policy lives elsewhere; this file only speaks the protocol.
 */

/** Any scheme client the SDK accepts for `register` (EVM or SVM exact). */
export type SchemeClient = Parameters<x402Client["register"]>[1];

/** v1 network names -> CAIP-2, so one policy covers both protocol versions. */
const V1_NETWORKS: Record<string, string> = {
  base: "eip155:8453",
  "base-sepolia": "eip155:84532",
  ethereum: "eip155:1",
  sepolia: "eip155:11155111",
  polygon: "eip155:137",
  "polygon-amoy": "eip155:80002",
  avalanche: "eip155:43114",
  "avalanche-fuji": "eip155:43113",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
};

/** Decoding headers needs no scheme or key: one stateless client serves every read. */
const reader = new x402HTTPClient(new x402Client());

/** A 402 as the service sent it, plus its offers normalized to v2 requirements with CAIP-2 networks. */
export interface PaymentDemand {
  version: 1 | 2;
  raw: PaymentRequired;
  /** Same order as `raw.accepts`. */
  offers: Requirement[];
  /** The reason a server gave for answering 402 again (e.g. a rejected payment). */
  error?: string;
}

/** Parse a 402 response; returns undefined when it carries no readable x402 demand. */
export function readPaymentDemand(
  getHeader: (name: string) => string | null,
  body: unknown,
): PaymentDemand | undefined {
  let raw: PaymentRequired;
  try {
    raw = reader.getPaymentRequiredResponse(getHeader, body);
  } catch {
    return undefined;
  }
  if (!raw || !Array.isArray(raw.accepts)) return undefined;
  const version = raw.x402Version === 1 ? 1 : 2;
  const offers = raw.accepts.map((a): Requirement => {
    const legacy = a as PaymentRequirements & { maxAmountRequired?: string };
    return {
      scheme: String(a.scheme),
      network:
        version === 1 ? (V1_NETWORKS[String(a.network)] ?? `v1:${String(a.network)}`) : String(a.network),
      amount: String(version === 1 ? (legacy.maxAmountRequired ?? a.amount) : a.amount),
      asset: String(a.asset),
      payTo: String(a.payTo),
      maxTimeoutSeconds: Number(a.maxTimeoutSeconds),
      ...(a.extra && typeof a.extra === "object" ? { extra: a.extra } : {}),
    };
  });
  return { version, raw, offers, ...(raw.error ? { error: raw.error } : {}) };
}

export interface SignedPayment {
  /** Headers to send with the paid retry (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for v1). Secret until sent. */
  headers: Record<string, string>;
  /** What the reconciler needs later: EVM authorizer, nonce and validBefore. Never the signature. */
  authorization: Record<string, string>;
}

/**
 * Sign the offer at `index` of a demand, and nothing else: the SDK's selector is pinned to that one
 * requirement, and the SDK's own spend controls are turned off because this service's policy and
 * ledger are the single authority (they ran before this call).
 */
export async function signOffer(
  demand: PaymentDemand,
  index: number,
  scheme: SchemeClient,
  expected: { amount: bigint; payTo: string },
): Promise<SignedPayment> {
  const chosen = demand.raw.accepts[index];
  if (!chosen) throw new Error("signOffer: no offer at that index");
  const client = new x402Client((_version, options) => {
    const match = options.find((o) => o === chosen);
    if (!match) throw new Error("the chosen offer is no longer available");
    return match;
  });
  if (demand.version === 1) client.registerV1(String(chosen.network), scheme);
  else client.register(chosen.network as Network, scheme);
  client.setSpendControls(false);
  // Only the plain exact transfer is signed: no Permit2 or approval flows, and no extensions a
  // service could use to make us sign anything else.
  const method = (chosen.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
  if (method !== undefined && method !== "eip3009") throw new Error("unsupported asset transfer method");
  const { extensions: _ignored, ...bare } = demand.raw;
  const payload: PaymentPayload = await client.createPaymentPayload({ ...bare, accepts: [chosen] });
  const authorization = checkSigned(payload, demand.offers[index]?.network ?? "", {
    ...expected,
    maxTimeoutSeconds: Number(chosen.maxTimeoutSeconds) || 0,
  });
  const headers = new x402HTTPClient(client).encodePaymentSignatureHeader(payload);
  return { headers, authorization };
}

/**
 * Defence in depth: what was signed must equal what was quoted and checked. For EVM the signed
 * authorization's value and recipient are compared; Solana transactions are built by the SDK from
 * the same requirement.
 */
function checkSigned(
  payload: PaymentPayload,
  network: string,
  expected: { amount: bigint; payTo: string; maxTimeoutSeconds: number },
): Record<string, string> {
  const auth = (payload.payload as { authorization?: Record<string, unknown> }).authorization;
  if (network.startsWith("eip155:")) {
    if (!auth) throw new Error("the signed EVM payload is not an EIP-3009 authorization");
    if (BigInt(String(auth.value)) !== expected.amount)
      throw new Error("signed amount differs from the quote");
    if (String(auth.to).toLowerCase() !== expected.payTo.toLowerCase()) {
      throw new Error("signed recipient differs from the quote");
    }
    return {
      kind: "evm-eip3009",
      from: String(auth.from),
      nonce: String(auth.nonce),
      validBefore: String(auth.validBefore),
    };
  }
  // A Solana transaction can land until its blockhash expires (about 150 blocks, 60-90 s), even when
  // the offer's timeout is shorter: wait for the longer of the two, with a margin.
  const expiresAt = String(
    Math.floor(Date.now() / 1000) + Math.max(expected.maxTimeoutSeconds, SOLANA_BLOCKHASH_SECONDS),
  );
  const wire = (payload.payload as { transaction?: unknown }).transaction;
  return {
    kind: "svm-exact",
    expiresAt,
    ...(typeof wire === "string" ? { messageHash: solanaMessageHash(Buffer.from(wire, "base64")) } : {}),
  };
}

/** Upper bound of a Solana blockhash's lifetime, with margin. */
const SOLANA_BLOCKHASH_SECONDS = 180;

/** Decode `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`; undefined when absent or unreadable. */
export function readSettlement(getHeader: (name: string) => string | null): SettleResponse | undefined {
  try {
    return reader.getPaymentSettleResponse(getHeader);
  } catch {
    return undefined;
  }
}

/**
 * SHA-256 of a Solana transaction's message bytes. The facilitator co-signs the same message as fee
 * payer, so the landed transaction has the same hash: the reconciler finds it without keeping any
 * signature.
 */
export function solanaMessageHash(wireTransaction: Uint8Array): string {
  const decoded = getTransactionDecoder().decode(wireTransaction);
  return createHash("sha256").update(new Uint8Array(decoded.messageBytes)).digest("hex");
}
