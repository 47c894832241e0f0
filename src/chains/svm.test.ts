/**
 * A Solana payment is signed with a blockhash from our own RPC: a seller's `extra.recentBlockhash`
 * (stale or invented) would make a transaction that cannot land, its budget held until the
 * reconciler proves it failed. Both the server key's scheme and the wallet's draft ignore it.
 */
import { type Blockhash, createSolanaRpc } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadLiteSvm,
  SOLANA_NETWORK,
  SOLANA_USDC_MINT,
  type SolanaNode,
  startSolanaNode,
} from "../devnet/solana/node.js";
import { svm } from "./svm.js";
import { solanaBlockhash } from "./svm-landed.js";

let node: SolanaNode;

beforeAll(async () => {
  const liteSvm = loadLiteSvm();
  if ("reason" in liteSvm) throw new Error(liteSvm.reason);
  node = await startSolanaNode(liteSvm.binding);
});
afterAll(async () => {
  await node?.stop();
});

/** 32 bytes of 7s in base58: a well-formed blockhash that no chain ever issued. */
const INVENTED = "US517G5965aydkZ46HS38QLi7UQiSojurfbQfKCELFx";

function wallet(name: string) {
  const found = node.wallets.find((w) => w.name === name);
  if (!found) throw new Error(`no devnet wallet ${name}`);
  return found;
}

function offerWithBlockhash() {
  return {
    scheme: "exact",
    network: SOLANA_NETWORK,
    asset: SOLANA_USDC_MINT,
    amount: "10000",
    payTo: wallet("merchant").address,
    maxTimeoutSeconds: 60,
    extra: {
      feePayer: wallet("facilitator").address,
      recentBlockhash: INVENTED,
      lastValidBlockHeight: "999999999",
    },
  };
}

async function signedBlockhash(transaction: unknown): Promise<{ hash: string; valid: boolean }> {
  if (typeof transaction !== "string") throw new Error("no transaction in the payload");
  const hash = solanaBlockhash(new Uint8Array(Buffer.from(transaction, "base64")));
  const rpc = createSolanaRpc(node.rpcUrl);
  return { hash, valid: (await rpc.isBlockhashValid(hash as Blockhash).send()).value };
}

describe("a seller's recentBlockhash", () => {
  it("is not what the server key signs: the blockhash is our RPC's, valid on chain", async () => {
    const payer = wallet("payer");
    const key = await svm.loadKey({ chain: "solana", secretKey: payer.secretKey, tokens: ["t".repeat(16)] });
    const { v2 } = key.schemesFor(SOLANA_NETWORK, node.rpcUrl);
    const payload = await v2.createPaymentPayload(2, offerWithBlockhash());
    const signed = await signedBlockhash((payload.payload as { transaction?: unknown }).transaction);
    expect(signed.hash).not.toBe(INVENTED);
    expect(signed.valid).toBe(true);
  });

  it("is not what the wallet is asked to sign either", async () => {
    const draft = svm.draftForWallet(wallet("payer").address, SOLANA_NETWORK, node.rpcUrl);
    const payload = await draft.schemes.v2.createPaymentPayload(2, offerWithBlockhash());
    const request = draft.request({ ...payload, accepted: offerWithBlockhash() });
    if (request.kind !== "solana-transaction") throw new Error(`asked ${request.kind}`);
    const signed = await signedBlockhash(request.transaction);
    expect(signed.hash).not.toBe(INVENTED);
    expect(signed.valid).toBe(true);
  });
});

describe("a seller's fixed memo", () => {
  // Found by a black-box run: two payments of one offer with extra.memo signed one transaction.
  it("never makes two payments one transaction: the second waits for a new blockhash", async () => {
    const payer = wallet("payer");
    const key = await svm.loadKey({ chain: "solana", secretKey: payer.secretKey, tokens: ["t".repeat(16)] });
    const { v2 } = key.schemesFor(SOLANA_NETWORK, node.rpcUrl);
    const offer = {
      ...offerWithBlockhash(),
      extra: { feePayer: wallet("facilitator").address, memo: "same-memo" },
    };
    const [a, b] = await Promise.all([v2.createPaymentPayload(2, offer), v2.createPaymentPayload(2, offer)]);
    const wire = (p: { payload: Record<string, unknown> }) => String(p.payload.transaction);
    expect(wire(a)).not.toBe(wire(b));
    const [first, second] = await Promise.all([signedBlockhash(wire(a)), signedBlockhash(wire(b))]);
    expect(first.hash).not.toBe(second.hash);
    expect(second.valid).toBe(true);
  });
});
