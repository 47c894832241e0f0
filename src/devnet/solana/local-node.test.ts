/**
 * The LiteSVM node over its JSON-RPC, with a clock the test moves: blockhashes expire after 150
 * slots and a transaction carrying an expired one never lands; a resent one is refused; the
 * history is bounded and `getFirstAvailableBlock` says from where on it is whole; time travel.
 */
import {
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { solanaKeypair } from "./keys.js";
import { loadLiteSvm } from "./litesvm.js";
import { associatedTokenAddress, type LocalNode, startLocalNode } from "./local-node.js";
import { SOLANA_USDC_MINT } from "./node.js";

const liteSvm = loadLiteSvm();
const SLOT_MS = 100;
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const TOKEN_PROGRAM = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");

let node: LocalNode | undefined;
afterEach(async () => {
  await node?.stop();
  node = undefined;
});

async function start(history = { historySeconds: 3600, historyMaxTransactions: 20_000 }) {
  if ("reason" in liteSvm) throw new Error(liteSvm.reason);
  let now = 1_800_000_000_000;
  const authority = await solanaKeypair("mint-authority");
  const mintData = new Uint8Array(82);
  const view = new DataView(mintData.buffer);
  view.setUint32(0, 1, true);
  mintData.set(getAddressEncoder().encode(address(authority.address)), 4);
  mintData[44] = 6;
  mintData[45] = 1;
  node = await startLocalNode(liteSvm.binding, {
    slotTimeMs: SLOT_MS,
    ...history,
    mint: { address: SOLANA_USDC_MINT, data: mintData, lamports: 1_461_600n },
    now: () => now,
  });
  const payer = await createKeyPairSignerFromBytes((await solanaKeypair("payer")).secretKey);
  const merchant = await createKeyPairSignerFromBytes((await solanaKeypair("merchant")).secretKey);
  node.setLamports(payer.address, 10n ** 11n);
  await node.setTokenBalance(payer.address, 1_000_000n);
  await node.setTokenBalance(merchant.address, 0n);
  const rpc = createSolanaRpc(node.rpcUrl);
  return { node, rpc, payer, merchant, tick: (slots: number) => (now += slots * SLOT_MS), now: () => now };
}

/** A 1-unit USDC transferChecked from payer to merchant with a memo. */
async function transfer(payer: KeyPairSigner, merchant: string, blockhash: string, memo: string) {
  const source = address(await associatedTokenAddress(payer.address, SOLANA_USDC_MINT));
  const destination = address(await associatedTokenAddress(merchant, SOLANA_USDC_MINT));
  const data = new Uint8Array(10);
  data[0] = 12;
  new DataView(data.buffer).setBigUint64(1, 1n, true);
  data[9] = 6;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [
          {
            programAddress: TOKEN_PROGRAM,
            accounts: [
              { address: source, role: 1 },
              { address: address(SOLANA_USDC_MINT), role: 0 },
              { address: destination, role: 1 },
              { address: payer.address, role: 2, signer: payer },
            ],
            data,
          },
          { programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(memo) },
        ],
        m,
      ),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

describe.skipIf("reason" in liteSvm)("the LiteSVM devnet node", () => {
  it("lands a transfer, lists it with its memo, and answers its status and transaction", async () => {
    const { rpc, payer, merchant, tick } = await start();
    tick(3);
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const wire = await transfer(payer, merchant.address, latest.blockhash, "nonce-1");
    const sim = await rpc.simulateTransaction(wire, { encoding: "base64", sigVerify: true }).send();
    expect(sim.value.err).toBeNull();
    const signature = await rpc.sendTransaction(wire, { encoding: "base64" }).send();
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    expect(status).toMatchObject({ err: null, confirmationStatus: "finalized" });
    const listed = await rpc.getSignaturesForAddress(payer.address, { limit: 10 }).send();
    expect(listed.map((e) => [e.signature, e.memo])).toEqual([[signature, "[7] nonce-1"]]);
    const tx = await rpc
      .getTransaction(signature, { encoding: "base64", maxSupportedTransactionVersion: 0 })
      .send();
    expect(tx?.transaction[0]).toBe(wire);
    expect(tx?.meta?.err).toBeNull();
    const balances = await rpc
      .getTokenAccountsByOwner(
        merchant.address,
        { mint: address(SOLANA_USDC_MINT) },
        { encoding: "jsonParsed" },
      )
      .send();
    expect(balances.value[0]?.account.data.parsed.info.tokenAmount.amount).toBe("1");
    // Resent: refused, and it did not land twice.
    await expect(rpc.sendTransaction(wire, { encoding: "base64" }).send()).rejects.toThrow();
    expect(await rpc.getSignaturesForAddress(payer.address, { limit: 10 }).send()).toHaveLength(1);
  });

  it("expires a blockhash 150 slots after it was issued: a transaction carrying it never lands", async () => {
    const { rpc, payer, merchant, tick } = await start();
    const { value: old } = await rpc.getLatestBlockhash().send();
    tick(150);
    expect((await rpc.isBlockhashValid(old.blockhash).send()).value).toBe(true);
    tick(1);
    expect((await rpc.isBlockhashValid(old.blockhash).send()).value).toBe(false);
    const wire = await transfer(payer, merchant.address, old.blockhash, "late");
    await expect(
      rpc.sendTransaction(wire, { encoding: "base64", skipPreflight: true }).send(),
    ).rejects.toThrow();
    const sim = await rpc.simulateTransaction(wire, { encoding: "base64" }).send();
    expect(sim.value.err).toBe("BlockhashNotFound");
    expect(await rpc.getSignaturesForAddress(payer.address, { limit: 10 }).send()).toEqual([]);
  });

  it("travels to a later slot: the slots in between pass, and so does a blockhash's lifetime", async () => {
    const { rpc, node } = await start();
    const { value: old } = await rpc.getLatestBlockhash().send();
    const slot = Number(await rpc.getSlot().send());
    const timeBefore = Number(await rpc.getBlockTime(BigInt(slot)).send());
    await timeTravel(node.rpcUrl, { absoluteSlot: slot + 151 });
    expect(Number(await rpc.getSlot().send())).toBe(slot + 151);
    expect((await rpc.isBlockhashValid(old.blockhash).send()).value).toBe(false);
    // 151 slots of 100 ms: the chain's clock is 15 s further on.
    expect(Number(await rpc.getBlockTime(BigInt(slot + 151)).send()) - timeBefore).toBeGreaterThanOrEqual(15);
  });

  it("keeps a bounded history and says from which block on it is whole", async () => {
    // 20 s of history (200 slots), at most 5 transactions.
    const { rpc, payer, merchant, tick } = await start({ historySeconds: 20, historyMaxTransactions: 5 });
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) {
      tick(1);
      const { value } = await rpc.getLatestBlockhash().send();
      sent.push(
        await rpc.sendTransaction(await transfer(payer, merchant.address, value.blockhash, `n${i}`)).send(),
      );
    }
    // All 8 are within a blockhash's lifetime: none may go yet.
    expect(await rpc.getSignaturesForAddress(payer.address, { limit: 100 }).send()).toHaveLength(8);
    tick(150);
    const first = Number(await rpc.getFirstAvailableBlock().send());
    const kept = await rpc.getSignaturesForAddress(payer.address, { limit: 100 }).send();
    expect(kept.map((e) => e.signature)).toEqual(sent.slice(3).reverse());
    expect(kept.every((e) => Number(e.slot) >= first)).toBe(true);
    expect(
      await rpc
        .getTransaction(sent[0] as never, { encoding: "base64", maxSupportedTransactionVersion: 0 })
        .send(),
    ).toBeNull();
    expect(await rpc.getBlockTime(BigInt(first)).send()).toBeTypeOf("bigint");
    tick(300);
    expect(await rpc.getSignaturesForAddress(payer.address, { limit: 100 }).send()).toEqual([]);
    expect(Number(await rpc.getFirstAvailableBlock().send())).toBeGreaterThan(Number(kept[0]?.slot));
  });

  it("travels in time: block times jump forward, slots go on", async () => {
    const { rpc, node, now, tick } = await start();
    const slot = Number(await rpc.getSlot().send());
    const target = now() + 3_600_000;
    await timeTravel(node.rpcUrl, { absoluteTimestamp: target });
    tick(2);
    const later = Number(await rpc.getSlot().send());
    expect(later).toBe(slot + 2);
    expect(Number(await rpc.getBlockTime(BigInt(later)).send())).toBeGreaterThanOrEqual(
      Math.floor(target / 1000),
    );
    expect(Number(await rpc.getBlockTime(BigInt(slot)).send())).toBeLessThan(
      Math.floor(target / 1000) - 3000,
    );
  });
});

/** The node's time-travel cheatcode (`surfnet_timeTravel`), which @solana/kit's typed RPC does not know. */
async function timeTravel(rpcUrl: string, to: { absoluteSlot: number } | { absoluteTimestamp: number }) {
  await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "surfnet_timeTravel", params: [to] }),
  });
}
