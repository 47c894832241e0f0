/**
 * Solana tabs whose transactions' answers are lost (docs/payments.md#tabs): the service sends the
 * funding and the return itself, so a connection dropped after the node took one must neither lose
 * the tab nor return it twice. A proxy in front of the devnet's Solana RPC forwards every call and,
 * when told, drops the answer to `sendTransaction` after the node has it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Base64EncodedWireTransaction, createSolanaRpc } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solanaResolver } from "../../src/chains/svm-landed.js";
import { solanaUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import type { TabOpened } from "../../src/protocol/index.js";
import { type Booted, boot, ledgerOf, priceOf, useTestDevnet } from "./harness.js";
import {
  ALICE,
  ask,
  call,
  closeTab,
  lamportsOf,
  openSolanaTab,
  readTab,
  signSolanaOpening,
  TAB_ENV,
} from "./tab-helpers.js";

const devnet = useTestDevnet();
let b: Booted;
let proxy: Server;
let dropSends = false;

/** Forwards JSON-RPC to `target`; while `dropSends`, a send reaches the node and its answer is lost. */
function rpcProxy(target: string): Promise<Server> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const answer = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await answer.text();
    if (dropSends && body.includes('"sendTransaction"')) {
      res.socket?.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  const solana = devnet.manifest.solana;
  if (!solana) throw new Error("the devnet runs no Solana node");
  proxy = await rpcProxy(solana.rpcUrl);
  const rpcUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const view = { ...devnet, manifest: { ...devnet.manifest, solana: { ...solana, rpcUrl } } };
  b = await boot(view, { store: "pglite", env: TAB_ENV });
});
afterAll(async () => {
  await b?.close();
  await new Promise((resolve) => proxy?.close(resolve));
});

/** The devnet's Solana user wallet (its key, its address) and the node's own RPC, past the proxy. */
function solanaUser(): { secret: Uint8Array; rpcUrl: string; address: string } {
  const secret = devnet.secrets.solana.user;
  const rpcUrl = devnet.manifest.solana?.rpcUrl;
  if (!secret || !rpcUrl) throw new Error("the devnet has no Solana user wallet");
  return { secret, rpcUrl, address: walletAddress(devnet, "solana", "user") };
}

describe("Solana tabs with lost answers", () => {
  it("a funding the node took but never answered opens from the chain; a lost return closes once", async () => {
    const price = priceOf(devnet, "weather");
    const secret = devnet.secrets.solana.user;
    if (!secret) throw new Error("the devnet has no Solana user wallet");
    const wallet = { address: walletAddress(devnet, "solana", "user"), secret };
    const before = await lamportsOf(devnet, wallet.address);

    dropSends = true;
    const tab = await openSolanaTab(b, wallet, price * 2n);
    expect(tab.fund.status).toBe("funding");
    dropSends = false;
    // The chain has it: the sweep finds the funding in the wallet's history, and the tab opens.
    await b.running.payments?.reconciler.sweep();
    expect(await readTab(b, tab)).toMatchObject({ status: "open" });
    expect(await solanaUsdcBalance(devnet, tab.session)).toBe(price * 2n);

    dropSends = true;
    expect(await closeTab(b, tab)).toMatchObject({ status: "closing" });
    dropSends = false;
    // The return landed unanswered: resolved from the session's history, never signed again.
    await b.running.payments?.reconciler.sweep();
    expect(await readTab(b, tab)).toMatchObject({
      status: "closed",
      refunded: { atomic: (price * 2n).toString() },
    });
    expect(await solanaUsdcBalance(devnet, tab.session)).toBe(0n);
    expect(await lamportsOf(devnet, tab.session)).toBe(0n);
    expect(before - (await lamportsOf(devnet, wallet.address))).toBe(10_000n);
  });

  /*
   * Found by a black-box run: a tab payment whose answer was lost settled on chain, yet the
   * reconciler called it failed (expired unused) and the tab gave the money back as unspent: it
   * searched the user's wallet's history, while the transfer is the session key's.
   */
  it("a tab's payment is found on chain by the reconciler, in the session key's history", async () => {
    const price = priceOf(devnet, "weather");
    const { secret, rpcUrl, address } = solanaUser();
    const tab = await openSolanaTab(b, { address, secret }, price * 2n);
    const turn = await ask(b, tab.token, address);
    const settled = turn.payments.find((p) => p.status === "settled");
    expect(settled?.payer).toBe(tab.session);
    const row = await ledgerOf(b.running).get(settled?.paymentId ?? "");
    if (!row) throw new Error("no row");
    // What the reconciler reads of a row left unclear: the chain, from the recorded intent alone.
    expect(await solanaResolver(rpcUrl).resolve(row)).toEqual({
      status: "settled",
      txHash: settled?.transaction,
      payer: tab.session,
    });
    await closeTab(b, { tabId: tab.tabId, token: tab.token });
  });

  // Found by a review (h44): a return that moves no token (a tab spent to its last cent) was
  // refused as "differs from the quote" on every sweep, so the tab never closed.
  it("a tab spent to its last cent closes: its token account is closed and its SOL returned", async () => {
    const price = priceOf(devnet, "weather");
    const { secret, address } = solanaUser();
    const before = await lamportsOf(devnet, address);
    const tab = await openSolanaTab(b, { address, secret }, price);
    const turn = await ask(b, tab.token, address);
    expect(turn.payments.find((p) => p.status === "settled")?.payer).toBe(tab.session);
    expect(await solanaUsdcBalance(devnet, tab.session)).toBe(0n);
    expect(await closeTab(b, tab)).toMatchObject({ status: "closed", refunded: { atomic: "0" } });
    expect(await lamportsOf(devnet, tab.session)).toBe(0n);
    // The wallet paid the two transactions' fees, and got back the account's rent and the key's SOL.
    expect(before - (await lamportsOf(devnet, address))).toBe(10_000n);
  });

  it("a funding the wallet sent itself first is open, not failed: the chain has it", async () => {
    const price = priceOf(devnet, "weather");
    const { secret, rpcUrl, address } = solanaUser();
    const body = { walletAddress: address, amount: (Number(price) / 1e6).toFixed(6) };
    const opened = (await (await call(b, "POST", "/api/tabs", ALICE, body)).json()) as TabOpened;
    const transaction = await signSolanaOpening(opened, secret);
    // The wallet (its fee payer) broadcasts it before handing it back.
    await createSolanaRpc(rpcUrl)
      .sendTransaction(transaction as Base64EncodedWireTransaction, { encoding: "base64" })
      .send();
    const funded = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, {
      token: opened.token,
      transaction,
    });
    expect(await funded.json()).toMatchObject({ status: "open" });
    expect(await solanaUsdcBalance(devnet, opened.session)).toBe(price);
    expect((await closeTab(b, { tabId: opened.tabId, token: opened.token })).refunded?.atomic).toBe(
      price.toString(),
    );
  });
});
