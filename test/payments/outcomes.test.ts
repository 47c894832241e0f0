/**
 * docs/protocol.md#finish-reasons: paying on EVM and on Solana end to end through the offline model, and
 * every finish reason reached for real on the devnet, checked on the stream (`p:`/`e:`/`d:`), in
 * the ledger and on chain; and the same outcomes as HTTP statuses in `Accept: application/json` mode.
 */
import { createPublicClient, createWalletClient, erc20Abi, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  type ChatResult,
  chat,
  chatBody,
  chatHeaders,
  chatRequest,
  dropSchema,
  evmBalances,
  ledgerOf,
  payCall,
  priceOf,
  rowsOf,
  ScriptedModels,
  STORES,
  type StoreKind,
  secretStrings,
  solanaBalances,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const models = new ScriptedModels();

const PAID_STEPS = ["quoted", "reserved", "signed", "submitted", "settled"];

function statuses(result: ChatResult): string[] {
  return result.payments.map((p) => p.status);
}

/** Nothing in the stream may carry a key or the dev token. */
function expectNoSecrets(result: ChatResult): void {
  for (const secret of secretStrings(devnet)) expect(result.raw).not.toContain(secret);
}

describe.each(STORES)("payment outcomes on the devnet (%s)", (store: StoreKind) => {
  let booted: Booted;
  const evmPayer = () => walletAddress(devnet, "evm", "payer");
  const token = () => devnet.manifest.devToken;

  beforeAll(async () => {
    booted = await boot(devnet, { store, models: models.registry });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  async function expectPaid(result: ChatResult, network: string): Promise<string> {
    expect(result.status).toBe(200);
    expect(result.errors).toEqual([]);
    expect(statuses(result)).toEqual(PAID_STEPS);
    const ids = new Set(result.payments.map((p) => p.paymentId));
    expect(ids.size).toBe(1);
    const settled = result.payments.at(-1);
    expect(settled?.network).toBe(network);
    expect(settled?.amount).toMatchObject({ atomic: "10000", usd: "0.01" });
    const tx = result.finish.transactionHash;
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(tx).toBeTruthy();
    expect(settled?.transaction).toBe(tx);
    expect(result.finish.payments).toEqual([
      expect.objectContaining({ status: "settled", transaction: tx, amountUsd: "0.01", network }),
    ]);
    const rows = await rowsOf(booted.running, result);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "settled", txHash: tx, amount: 10000n, network });
    expect(rows[0]?.paymentId).toBe(settled?.paymentId);
    expect(rows[0]?.history.map((h) => h.status)).toEqual(PAID_STEPS.slice(1));
    expectNoSecrets(result);
    return tx ?? "";
  }

  it("pays the weather on EVM: stream, ledger and balances agree", async () => {
    const before = await evmBalances(devnet);
    const result = await chat(booted.running, { wallet: evmPayer(), token: token() });
    const tx = await expectPaid(result, devnet.manifest.evm.network);
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
    expect(after.merchant - before.merchant).toBe(priceOf(devnet, "weather"));
    expect(result.raw).toContain("Paris");
  });

  it("pays the weather on Solana: stream, ledger and balances agree", async (ctx) => {
    const solana = devnet.manifest.solana;
    // Where no Solana node loads (LiteSVM has no package for the platform), the devnet runs EVM only.
    if (!solana) return ctx.skip();
    const before = await solanaBalances(devnet);
    const result = await chat(booted.running, {
      wallet: walletAddress(devnet, "solana", "payer"),
      token: token(),
    });
    await expectPaid(result, solana.network);
    const after = await solanaBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
    expect(after.merchant - before.merchant).toBe(priceOf(devnet, "weather"));
  });

  /** A refusal before signing: no ledger row reached `signed`, and no money moved. */
  async function expectNothingSigned(result: ChatResult, run: Promise<void>): Promise<void> {
    await run;
    for (const row of await rowsOf(booted.running, result)) {
      expect(row.history.map((h) => h.status)).not.toContain("signed");
      expect(row.txHash).toBeNull();
    }
    expect(statuses(result)).not.toContain("signed");
    expectNoSecrets(result);
  }

  async function unchanged(payer = "payer"): Promise<() => Promise<void>> {
    const before = await evmBalances(devnet, payer);
    return async () => expect(await evmBalances(devnet, payer)).toEqual(before);
  }

  it("refuses the premium report above the per-transaction limit (offline model): limit-exceeded", async () => {
    const check = await unchanged();
    const result = await chat(booted.running, {
      wallet: evmPayer(),
      token: token(),
      message: "Buy the premium report about AI",
    });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors.at(-1)).toMatchObject({
      code: "limit_exceeded",
      limit: "perTransaction",
      limitUsd: "1.00",
      remainingUsd: "1.00",
      priceUsd: "2.50",
    });
    expect(await rowsOf(booted.running, result)).toEqual([]);
    await expectNothingSigned(result, check());
  });

  it("refuses the premium report in the pipeline when a model pays it anyway: p: refused, no row", async () => {
    const check = await unchanged();
    const message = models.script("premium", [[payCall(devnet, "premium-report")]]);
    const result = await chat(booted.running, { wallet: evmPayer(), token: token(), message });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(statuses(result)).toEqual(["quoted", "refused"]);
    expect(result.errors).toEqual([
      expect.objectContaining({
        code: "limit_exceeded",
        limit: "perTransaction",
        limitUsd: "1.00",
        remainingUsd: "1.00",
        priceUsd: "2.50",
      }),
    ]);
    expect(await rowsOf(booted.running, result)).toEqual([]);
    await expectNothingSigned(result, check());
  });

  it("refuses when the request's daily limit is below the price: limit-exceeded", async () => {
    const check = await unchanged();
    const message = models.script("weather-once", [[payCall(devnet)]]);
    for (const m of [undefined, message]) {
      const result = await chat(booted.running, {
        wallet: evmPayer(),
        token: token(),
        spendingLimits: { daily: "0.005" },
        ...(m ? { message: m } : {}),
      });
      expect(result.finish.finishReason).toBe("limit-exceeded");
      expect(result.errors.at(-1)).toMatchObject({
        code: "limit_exceeded",
        limit: "daily",
        limitUsd: "0.005",
        priceUsd: "0.01",
      });
      expect(result.errors.at(-1)?.remainingUsd).toMatch(/^0\.0*[0-9]*$/);
      expect(await rowsOf(booted.running, result)).toEqual([]);
      await expectNothingSigned(result, Promise.resolve());
    }
    await check();
  });

  it("refuses a wallet too poor to pay (payer-low): insufficient-balance, nothing signed", async () => {
    const check = await unchanged("payer-low");
    const result = await chat(booted.running, {
      wallet: walletAddress(devnet, "evm", "payer-low"),
      token: token(),
    });
    expect(result.finish.finishReason).toBe("insufficient-balance");
    expect(statuses(result)).toEqual(["quoted", "refused"]);
    expect(result.errors.at(-1)).toMatchObject({
      code: "insufficient_balance",
      priceUsd: "0.01",
      balanceUsd: "0.001",
    });
    for (const row of await rowsOf(booted.running, result)) expect(row.status).toBe("released");
    await expectNothingSigned(result, check());
  });

  it("a wallet drained elsewhere within the 15 s a balance read stands: the chain refuses, nothing is paid, the next payment reads the chain", async () => {
    const m = devnet.manifest;
    const wallet = walletAddress(devnet, "evm", "payer-2");
    const chain = { ...hardhat, id: m.evm.chainId };
    const transport = http(m.evm.rpcUrl);
    const reader = createPublicClient({ chain, transport });
    const send = async (name: string, to: `0x${string}`, amount: bigint) => {
      const account = privateKeyToAccount(devnet.secrets.evm[name] as `0x${string}`);
      const hash = await createWalletClient({ account, chain, transport }).writeContract({
        address: m.evm.usdc,
        abi: erc20Abi,
        functionName: "transfer",
        args: [to, amount],
      });
      expect((await reader.waitForTransactionReceipt({ hash })).status).toBe("success");
    };
    // A payment reads the balance; the wallet then spends everything it holds in another app.
    await expectPaid(await chat(booted.running, { wallet, token: token() }), m.evm.network);
    const held = (await evmBalances(devnet, "payer-2")).payer;
    await send("payer-2", walletAddress(devnet, "evm", "payer"), held);
    try {
      const before = await evmBalances(devnet, "payer-2");
      expect(before.payer).toBe(0n);
      // The remembered balance lets it through; the facilitator refuses the transfer. The service
      // still holds the signed authorization (a top-up before it expires and it could settle), so
      // the user hears it is unclear, never that it was refused (h51: a hostile seller said
      // "insufficient" and settled it later).
      const refused = await chat(booted.running, { wallet, token: token() });
      expect(refused.finish.finishReason).toBe("payment-unclear");
      expect(refused.errors.at(-1)).toMatchObject({ code: "payment_unclear" });
      expect(refused.errors.at(-1)?.message).toMatch(/did not cover the payment.*Do not pay again/);
      expect(statuses(refused)).not.toContain("settled");
      expect((await rowsOf(booted.running, refused)).map((r) => r.status)).not.toContain("settled");
      expect(await evmBalances(devnet, "payer-2")).toEqual(before);
      // That outcome forgot the remembered balance: the next payment asks the chain and is refused
      // before anything is signed.
      const next = await chat(booted.running, { wallet, token: token() });
      expect(next.finish.finishReason).toBe("insufficient-balance");
      expect(statuses(next)).toEqual(["quoted", "refused"]);
      expect(next.errors.at(-1)).toMatchObject({ code: "insufficient_balance", balanceUsd: "0.00" });
    } finally {
      await send("payer", wallet, held);
    }
  });

  it.each([["503"], ["refuse"]] as const)(
    "reports a service that is down (%s) as service-unavailable",
    async (mode) => {
      const check = await unchanged();
      await devnet.faults.set({ serviceDown: mode });
      const message = models.script("weather-once", [[payCall(devnet)]]);
      for (const m of [undefined, message]) {
        const result = await chat(booted.running, {
          wallet: evmPayer(),
          token: token(),
          ...(m ? { message: m } : {}),
        });
        expect(result.finish.finishReason).toBe("service-unavailable");
        expect(result.errors.at(-1)?.code).toBe("service_unavailable");
        expect(await rowsOf(booted.running, result)).toEqual([]);
        await expectNothingSigned(result, Promise.resolve());
      }
      await check();
    },
  );

  /** A sent payment that did not settle: unclear while the row is unknown, failed once the chain says so. */
  function expectUnsettled(result: ChatResult, status: string | undefined): void {
    expect(status === "unknown" || status === "failed").toBe(true);
    const unclear = status === "unknown";
    expect(result.finish.finishReason).toBe(unclear ? "payment-unclear" : "payment-failed");
    expect(result.errors.at(-1)?.code).toBe(unclear ? "payment_unclear" : "payment_failed");
  }

  it("reports the facilitator down as payment-unclear (sent, not settled, not called failed); nothing moved", async () => {
    const check = await unchanged();
    await devnet.faults.set({ facilitatorDown: "503" });
    const message = models.script("weather-once", [[payCall(devnet)]]);
    const result = await chat(booted.running, { wallet: evmPayer(), token: token(), message });
    const rows = await rowsOf(booted.running, result);
    expect(rows).toHaveLength(1);
    expectUnsettled(result, rows[0]?.status);
    expect(result.finish.transactions).toEqual([]);
    await check();
    expectNoSecrets(result);
  });

  it("reports a failing settlement as payment-unclear while recorded unknown, never paid twice", async () => {
    const check = await unchanged();
    await devnet.faults.set({ settleFail: true });
    const result = await chat(booted.running, { wallet: evmPayer(), token: token() });
    const rows = await rowsOf(booted.running, result);
    expect(rows).toHaveLength(1);
    expectUnsettled(result, rows[0]?.status);
    expect(rows[0]?.history.filter((h) => h.status === "signed")).toHaveLength(1);
    expect(statuses(result).filter((s) => s === "signed")).toHaveLength(1);
    await check();
    expectNoSecrets(result);
  });

  it.each([
    ["a wallet the server holds no key for", "user", true],
    ["a held key but no bearer token", "payer", false],
  ] as const)("asks the user's wallet instead of signing, for %s", async (_what, name, withToken) => {
    const check = await unchanged(name);
    const result = await chat(booted.running, {
      wallet: walletAddress(devnet, "evm", name),
      ...(withToken ? { token: token() } : {}),
    });
    expect(result.finish.finishReason).toBe("approval-required");
    expect(statuses(result)).toEqual(["quoted", "awaiting_approval"]);
    expect(result.errors).toEqual([]);
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => r.status)).toEqual(["awaiting_approval"]);
    await expectNothingSigned(result, check());
  });

  describe("Accept: application/json", () => {
    async function jsonChat(options: Parameters<typeof chatBody>[0]) {
      const response = await booted.running.service.app.request(
        "/api/chat",
        chatRequest(chatBody(options), { ...chatHeaders(options), Accept: "application/json" }),
      );
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await response.json()) as {
        text: string;
        payments: Array<{ status: string }>;
        errors: Array<{ code: string }>;
        finish: { finishReason: string; transactionHash?: string };
      };
      return { status: response.status, body };
    }

    it("answers 200 for a paid turn, with the transaction", async () => {
      const { status, body } = await jsonChat({ wallet: evmPayer(), token: token() });
      expect(status).toBe(200);
      expect(body.finish.finishReason).toBe("payment-complete");
      expect(body.finish.transactionHash).toMatch(/^0x/);
      expect(body.payments.map((p) => p.status)).toEqual(PAID_STEPS);
      expect(body.text).toContain("Paris");
    });

    it("answers 403 for a limit, 402 for a poor wallet, 503 for a service down, 202 for a payment sent but unclear", async () => {
      const limit = await jsonChat({
        wallet: evmPayer(),
        token: token(),
        spendingLimits: { daily: "0.005" },
      });
      expect([limit.status, limit.body.errors.at(-1)?.code]).toEqual([403, "limit_exceeded"]);

      const poor = await jsonChat({ wallet: walletAddress(devnet, "evm", "payer-low"), token: token() });
      expect([poor.status, poor.body.errors.at(-1)?.code]).toEqual([402, "insufficient_balance"]);

      await devnet.faults.set({ serviceDown: "503" });
      const down = await jsonChat({ wallet: evmPayer(), token: token() });
      expect([down.status, down.body.errors.at(-1)?.code]).toEqual([503, "service_unavailable"]);

      await devnet.faults.set({ serviceDown: null, settleFail: true });
      const unclear = await jsonChat({ wallet: evmPayer(), token: token() });
      expect([unclear.status, unclear.body.errors.at(-1)?.code]).toEqual([202, "payment_unclear"]);
      expect(unclear.body.finish.finishReason).toBe("payment-unclear");
    });
  });

  it("keeps the ledger's daily spend equal to what settled on chain for this wallet", async () => {
    const summary = await ledgerOf(booted.running).spending(evmPayer(), new Date());
    // Unknown rows from the failure cases above count as spent (the safe side); settled ones moved money.
    expect(summary.today).toBeGreaterThanOrEqual(summary.settled);
    expect(summary.pending).toBe(0n);
  });
});
