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

/** The wallet sends the signed TransferWithAuthorization to the chain itself. */
async function sendItself(opened: TabOpened, signature: `0x${string}`): Promise<void> {
  if (opened.sign.kind !== "evm-typed-data") throw new Error("not EVM");
  const m = opened.sign.typedData.message as Record<string, string>;
  const { r, s, v, yParity } = parseSignature(signature);
  const wallet = createWalletClient({ account: user, transport: http(devnet.manifest.evm.rpcUrl) });
  await wallet.writeContract({
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

  it("landing after the tab expired unfunded: the keeper returns what the session key holds", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const opened = await open("0.04");
    const signature = await signOpening(opened, user);
    b.clock.jumpTo(new Date(opened.signBy).getTime() + 1_000); // the service's window has passed
    try {
      await b.running.payments?.reconciler.sweep();
      expect((await read(opened)).status).toBe("expired");
    } finally {
      b.clock.reset();
    }
    await sendItself(opened, signature); // the chain's own window (validBefore) has not
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before - 40_000n);
    await b.running.payments?.reconciler.sweep();
    expect((await read(opened)).status).toBe("closed");
    expect(await evmUsdcBalance(devnet, opened.session as `0x${string}`)).toBe(0n);
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
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
