/**
 * docs/payments.md#tabs: a tab's funding can reach the chain without the service sending it (the
 * wallet, or a relayer, sends what it signed itself) or after the service gave up on the tab. Its
 * money is then in the session key, and only the service can move it: the tab opens (when the
 * funding answer finds it used on chain) or the keeper returns it (a tab already expired or
 * failed). Found by a black-box run (h50): such a tab was `failed` and its money stayed.
 */
import { createWalletClient, http, parseAbi, parseSignature } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmUsdcBalance } from "../../src/devnet/testing/index.js";
import type { TabOpened, TabView } from "../../src/protocol/index.js";
import { type Booted, boot, useTestDevnet } from "./harness.js";
import { ALICE, call, signOpening, TAB_ENV, userAccount } from "./tab-helpers.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let b: Booted;

beforeAll(async () => {
  user = userAccount(devnet);
  b = await boot(devnet, { store: "pglite", env: TAB_ENV });
});
afterAll(() => b?.close());

async function open(amount: string, seconds?: number): Promise<TabOpened> {
  const body = { walletAddress: user.address, amount, ...(seconds ? { seconds } : {}) };
  return (await (await call(b, "POST", "/api/tabs", ALICE, body)).json()) as TabOpened;
}

const wallet = () => createWalletClient({ account: user, transport: http(devnet.manifest.evm.rpcUrl) });

/** The service's clock reads `ms` while `what` runs. */
async function at<T>(ms: number, what: () => Promise<T> | undefined): Promise<T | undefined> {
  b.clock.jumpTo(ms);
  try {
    return await what();
  } finally {
    b.clock.reset();
  }
}

/** A plain transfer from the user's wallet. */
async function transfer(to: `0x${string}`, atomic: bigint): Promise<void> {
  await wallet().writeContract({
    chain: null,
    address: devnet.manifest.evm.usdc as `0x${string}`,
    abi: parseAbi(["function transfer(address,uint256) returns (bool)"]),
    functionName: "transfer",
    args: [to, atomic],
  });
}

/** The wallet sends the signed TransferWithAuthorization to the chain itself. */
async function sendItself(opened: TabOpened, signature: `0x${string}`): Promise<void> {
  if (opened.sign.kind !== "evm-typed-data") throw new Error("not EVM");
  const m = opened.sign.typedData.message as Record<string, string>;
  const { r, s, v, yParity } = parseSignature(signature);
  await wallet().writeContract({
    chain: null,
    address: devnet.manifest.evm.usdc as `0x${string}`,
    abi: parseAbi([
      "function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
    ]),
    functionName: "transferWithAuthorization",
    args: [
      m.from as `0x${string}`,
      m.to as `0x${string}`,
      BigInt(m.value as string),
      BigInt(m.validAfter as string),
      BigInt(m.validBefore as string),
      m.nonce as `0x${string}`,
      Number(v ?? 27n + BigInt(yParity)),
      r,
      s,
    ],
  });
}

/** The wallet cancels its signed funding's nonce (EIP-3009 cancelAuthorization): it can never be used. */
async function cancelNonce(opened: TabOpened): Promise<void> {
  if (opened.sign.kind !== "evm-typed-data") throw new Error("not EVM");
  const domain = opened.sign.typedData.domain as Record<string, unknown>;
  const m = opened.sign.typedData.message as Record<string, string>;
  const cancel = await user.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) } as never,
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: user.address, nonce: m.nonce as `0x${string}` },
  });
  await wallet().writeContract({
    chain: null,
    address: devnet.manifest.evm.usdc as `0x${string}`,
    abi: parseAbi(["function cancelAuthorization(address,bytes32,bytes)"]),
    functionName: "cancelAuthorization",
    args: [user.address, m.nonce as `0x${string}`, cancel],
  });
}

/** The tab's funding window passes unsigned: the keeper expires it. */
async function expire(opened: TabOpened): Promise<void> {
  await at(new Date(opened.signBy).getTime() + 1_000, () => b.running.payments?.reconciler.sweep());
  expect((await read(opened)).status).toBe("expired");
}

/** The expired and failed tabs the keeper has still to read. */
async function unchecked(): Promise<string[]> {
  const store = b.running.store?.tabs;
  if (!store) throw new Error("no tab store");
  return (await store.listUnchecked(new Date(Date.now() + 3_600_000))).map((t) => t.tabId);
}

const read = async (opened: TabOpened) =>
  (await (
    await call(b, "GET", `/api/tabs/${opened.tabId}`, ALICE, undefined, { "x-tab-token": opened.token })
  ).json()) as TabView;

describe("a tab's funding that reached the chain another way", () => {
  it("sent by the wallet before the service: the funding answer opens the tab; closing returns it all", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const opened = await open("0.07");
    const signature = await signOpening(opened, user);
    await sendItself(opened, signature);
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(70_000n);
    const fund = { token: opened.token, signature };
    const funded = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, fund);
    expect(funded.status).toBe(200);
    expect(await funded.json()).toMatchObject({ status: "open" });
    const closed = await call(b, "POST", `/api/tabs/${opened.tabId}/close`, ALICE, { token: opened.token });
    expect(await closed.json()).toMatchObject({ status: "closed" });
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
  });

  it("landing after the tab expired: read once the funding can no longer land, then returned, however late", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const opened = await open("0.04");
    const signature = await signOpening(opened, user);
    await expire(opened);
    await sendItself(opened, signature); // the chain's own window (validBefore) has not passed
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before - 40_000n);
    await b.running.payments?.reconciler.sweep(); // still within it: not read yet
    expect((await read(opened)).status).toBe("expired");
    // The first sweep comes long after (every instance was down, h53): it is read all the same.
    await at(new Date(opened.signBy).getTime() + 60 * 60_000, () => b.running.payments?.reconciler.sweep());
    expect((await read(opened)).status).toBe("closing");
    await b.running.payments?.reconciler.sweep(); // its refund, signed on the chain's own clock
    expect((await read(opened)).status).toBe("closed");
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(0n);
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
  });

  it("a stray transfer to an expired tab's key does not close it before its funding can no longer land", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const opened = await open("0.05");
    const signature = await signOpening(opened, user);
    await expire(opened);
    await transfer(opened.session as `0x${string}`, 1n); // anyone may send the key something
    await b.running.payments?.reconciler.sweep();
    expect((await read(opened)).status).toBe("expired");
    await sendItself(opened, signature); // then the real funding lands, within its window (h53)
    await at(new Date(opened.signBy).getTime() + 31 * 60_000, () => b.running.payments?.reconciler.sweep());
    await b.running.payments?.reconciler.sweep(); // its refund, signed on the chain's own clock
    expect((await read(opened)).status).toBe("closed");
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(0n);
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
  });

  it("an expired tab whose key stays empty is read once, and shows no refund", async () => {
    const opened = await open("0.02");
    await expire(opened);
    await at(new Date(opened.signBy).getTime() + 31 * 60_000, async () => {
      await b.running.payments?.reconciler.sweep();
      expect(await unchecked()).not.toContain(opened.tabId);
    });
    const view = await read(opened);
    expect(view.status).toBe("expired");
    expect(view.refunded).toBeUndefined();
  });

  it("a funding whose nonce the wallet cancelled does not open the tab: nothing moved (h53)", async () => {
    const opened = await open("0.06");
    const signature = await signOpening(opened, user);
    await cancelNonce(opened);
    const fund = { token: opened.token, signature };
    const view = (await (
      await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, fund)
    ).json()) as TabView;
    expect(view.status).toBe("failed");
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(0n);
  });

  it("a funding left unclear (its intent recorded, then a crash) whose nonce was cancelled: the keeper opens nothing (h54)", async () => {
    const opened = await open("0.06");
    await signOpening(opened, user);
    await cancelNonce(opened);
    // What the funding answer records before it asks the facilitator; the process dies there.
    const store = b.running.store?.tabs;
    if (opened.sign.kind !== "evm-typed-data" || !store) throw new Error("not EVM, or no tab store");
    const m = opened.sign.typedData.message as Record<string, string>;
    const funding = {
      kind: "evm-eip3009",
      from: user.address,
      nonce: m.nonce,
      validBefore: String(m.validBefore),
    };
    expect(await store.move(opened.tabId, "awaiting_signature", "funding", { funding }, new Date())).toBe(
      true,
    );
    await b.running.payments?.reconciler.sweep();
    expect((await read(opened)).status).toBe("failed");
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(0n);
  });

  it("a short tab whose end passed before it was funded is not funded (409 tab_closed)", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const opened = await open("0.03", 60);
    expect(new Date(opened.signBy).getTime()).toBeGreaterThan(new Date(opened.endsAt).getTime());
    const signature = await signOpening(opened, user);
    b.clock.jumpTo(new Date(opened.endsAt).getTime() + 5_000); // within signBy, after the end
    try {
      const fund = { token: opened.token, signature };
      const res = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, fund);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ code: "tab_closed" });
      expect((await read(opened)).status).toBe("expired");
    } finally {
      b.clock.reset();
    }
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
  });
});
