/**
 * docs/payments.md#spending-limits: an operator's key's caps bound every payment on the real devnet and the
 * real store. A key with a $0.02 daily cap pays two $0.01 weather asks through the payments face
 * and is refused the third with `limit_exceeded` (`limit: "daily"`) while the request sends daily
 * "100"; the ledger and the chain agree that exactly two were paid.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWallet } from "../../src/chains/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { PayerSession, PaymentsFace } from "../../src/payments/face.js";
import { parsePayerConfig } from "../../src/protocol/index.js";
import {
  type Booted,
  boot,
  dropSchema,
  evmBalances,
  ledgerOf,
  priceOf,
  STORES,
  type StoreKind,
  serviceUrl,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const KEY = "ops-weather";

describe.each(STORES)("a key's daily cap (%s)", (store: StoreKind) => {
  let booted: Booted;
  beforeAll(async () => {
    booted = await boot(devnet, { store });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  const face = (): PaymentsFace => {
    const payments = booted.running.payments;
    if (!payments) throw new Error("payments are off");
    return payments.face;
  };
  let scopes = 0;
  const session = (): PayerSession => ({
    caller: KEY,
    grant: { name: KEY, daily: 20_000n },
    bearerToken: devnet.manifest.devToken,
    // The wallet and limits as a client sends them: daily "100".
    ...parsePayerConfig(
      { walletAddress: walletAddress(devnet, "evm", "payer"), spendingLimits: { daily: "100" } },
      "the test's payer",
      parseWallet,
    ),
    scopeId: `key_caps_${store}_${++scopes}`,
    signal: new AbortController().signal,
    deadline: booted.clock.now().getTime() + 30_000,
  });

  it("pays two $0.01 weather asks and refuses the third with limit: daily, whatever the request sends", async () => {
    const price = priceOf(devnet, "weather");
    expect(price).toBe(10_000n);
    const before = await evmBalances(devnet);
    const ask = (city: string) =>
      face().pay(session(), { url: serviceUrl(devnet, "weather"), query: { city } });
    const first = await ask("Paris");
    const second = await ask("Lyon");
    expect([first.status, second.status]).toEqual(["paid", "paid"]);
    expect(await ask("Nice")).toMatchObject({
      status: "refused",
      error: { code: "limit_exceeded", limit: "daily", limitUsd: "0.02", remainingUsd: "0.00" },
    });
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(2n * price);
    const rows = await Promise.all(
      [first, second].map((out) => ledgerOf(booted.running).get(out.paymentId ?? "")),
    );
    expect(rows.map((r) => [r?.status, r?.caller])).toEqual([
      ["settled", KEY],
      ["settled", KEY],
    ]);
    expect(await face().budget(session())).toMatchObject({
      limits: { dailyUsd: "0.02" },
      remainingTodayUsd: "0.00",
      key: { name: KEY, dailyUsd: "0.02", spentTodayUsd: "0.02", remainingTodayUsd: "0.00" },
    });
  });
});
