/**
 * Sellers this service did not build (docs/devnet.md#x402-v1-sellers), paid end to end through whole
 * /api/chat turns (a scripted model asks; the service's own policy, ledger and signing code pay):
 *
 * - x402 v1 sellers built with the real v1 package (`x402-hono` 1.1.0 over `x402` 1.2.0): on the
 *   devnet's Solana node as `solana-devnet`, and on an EVM chain that really has Base Sepolia's
 *   chain id as `base-sepolia` (v1 signatures bind the chain id its network name stands for);
 * - Faremeter sellers (`@faremeter/middleware` 0.22.0 with Faremeter's own in-process facilitator
 *   handlers) on the devnet's EVM chain, and on Solana where Faremeter offers `maxTimeoutSeconds: 0`;
 * - a seller that only offers Permit2 is refused before anything is reserved or signed.
 *
 * The service runs as `PAYMENTS=external`, configured for these sellers like any real deployment.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMiddleware } from "@faremeter/middleware/hono";
import { exact as faremeterEvm } from "@faremeter/payment-evm";
import { exact as faremeterSolana } from "@faremeter/payment-solana";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import { Hono } from "hono";
import {
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  type EIP1193Provider,
  erc20Abi,
  http,
  publicActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOYER_KEY } from "../../src/devnet/evm/accounts.js";
import { loadArtifacts } from "../../src/devnet/evm/artifacts.js";
import {
  createEdrProvider,
  MULTICALL3_ADDRESS,
  rawRequest,
  USDC_DOMAIN,
} from "../../src/devnet/evm/chain.js";
import { createFacilitatorApp } from "../../src/devnet/facilitator/app.js";
import { DiscoveryCatalog } from "../../src/devnet/facilitator/catalog.js";
import { createFacilitator } from "../../src/devnet/facilitator/schemes.js";
import { FaultSwitch } from "../../src/devnet/faults.js";
import { DevnetHttpServer } from "../../src/devnet/http-server.js";
import { startV1Sellers, v1RailsFor } from "../../src/devnet/services/v1.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  type ChatResult,
  chat,
  evmBalances,
  rowsOf,
  ScriptedModels,
  secretStrings,
  solanaBalances,
  useTestDevnet,
} from "./harness.js";

const TOKEN = "foreign-sellers-token-0123456789";
const PRICE = 10_000n; // $0.01, what every seller here asks
const BASE_SEPOLIA = { v1: "base-sepolia", caip2: "eip155:84532", chainId: 84532 } as const;

const devnet = useTestDevnet();
let booted: Booted;
let dir: string;
let pose: PosingChain;
const models = new ScriptedModels();
const servers: DevnetHttpServer[] = [];
const stops: Array<() => Promise<void>> = [];
const streams: string[] = [];
/** Paid requests that reached the Permit2-only seller (must stay 0). */
let permit2PaidHits = 0;
const urls = { v1Solana: "", v1Evm: "", faremeterEvm: "", faremeterSolana: "", permit2: "" };

/** Serves a fetch handler on a random loopback port until the end of the file. */
async function serve(handler: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server = new DevnetHttpServer("127.0.0.1", handler);
  await server.start();
  servers.push(server);
  return server.url;
}

beforeAll(async () => {
  const m = devnet.manifest;
  const solana = m.solana;
  if (!solana) throw new Error(`these sellers need the Solana node: ${m.solanaUnavailableReason}`);
  const v1Solana = m.v1Services.find((s) => s.networks.includes(solana.network));
  if (!v1Solana) throw new Error(`no v1 Solana seller on the devnet: ${m.v1ServicesUnavailableReason}`);
  urls.v1Solana = v1Solana.url;

  // The v1 EVM seller: a chain with Base Sepolia's chain id, its own facilitator (the devnet's
  // facilitator code, registering the v1 scheme under base-sepolia), and the devnet's v1 seller code.
  pose = await startChainPosingAs(BASE_SEPOLIA.chainId);
  stops.push(() => pose.stop());
  const key = (name: string) => {
    const value = devnet.secrets.evm[name];
    if (!value) throw new Error(`no EVM key ${name}`);
    return value;
  };
  const faults = new FaultSwitch();
  const facilitatorUrl = await serve(
    createFacilitatorApp({
      facilitator: await createFacilitator(
        {
          network: BASE_SEPOLIA.caip2,
          chainId: BASE_SEPOLIA.chainId,
          rpcUrl: pose.rpcUrl,
          privateKey: key("facilitator"),
          v1Network: BASE_SEPOLIA.v1,
        },
        null,
      ),
      catalog: new DiscoveryCatalog(),
      faults,
      hangUntilReleased: async () => {},
      log: () => {},
    }).fetch,
  );
  const merchantEvm = walletAddress(devnet, "evm", "merchant");
  const v1Evm = await startV1Sellers({
    host: "127.0.0.1",
    facilitatorUrl,
    rails: v1RailsFor([
      { network: BASE_SEPOLIA.caip2, asset: pose.usdc, payTo: merchantEvm, extra: { ...USDC_DOMAIN } },
    ]),
    faults,
    onStop: (stop) => stops.push(stop),
  });
  const seller = v1Evm.sellers[0];
  if (!seller) throw new Error(`no v1 EVM seller: ${v1Evm.reason}`);
  urls.v1Evm = seller.url;

  // Faremeter sellers, each settling in process with Faremeter's own facilitator handler. The
  // merchant pays the gas (EVM) and the fees (Solana, as Faremeter's fee payer) itself.
  const evmHandler = await faremeterEvm.createFacilitatorHandler(
    { id: m.evm.chainId, name: "x402 devnet", rpcUrls: { default: { http: [m.evm.rpcUrl] } } } as never,
    key("merchant"),
    { address: m.evm.usdc, contractName: USDC_DOMAIN.name } as never,
    { network: m.evm.network },
  );
  urls.faremeterEvm = `${await serve(
    await faremeterSeller(evmHandler, m.evm.network, m.evm.usdc, merchantEvm),
  )}/weather`;
  const solanaMerchantKey = devnet.secrets.solana.merchant;
  if (!solanaMerchantKey) throw new Error("no Solana merchant key");
  const solanaHandler = await faremeterSolana.createFacilitatorHandler(
    solana.network,
    solana.rpcUrl,
    // Its types (from its own @solana/kit 6) omit the plain forms it accepts: key bytes, a mint string.
    solanaMerchantKey as never,
    solana.usdcMint as never,
  );
  urls.faremeterSolana = `${await serve(
    await faremeterSeller(
      solanaHandler,
      solana.network,
      solana.usdcMint,
      walletAddress(devnet, "solana", "merchant"),
    ),
  )}/weather`;

  // A seller whose only offer is Permit2: nothing may be reserved, signed or sent to it.
  const permit2Origin = await serve(async (request) => {
    if (request.headers.has("payment-signature") || request.headers.has("x-payment")) permit2PaidHits++;
    const required = {
      x402Version: 2,
      resource: { url: request.url },
      accepts: [
        {
          scheme: "exact",
          network: m.evm.network,
          amount: PRICE.toString(),
          asset: m.evm.usdc,
          payTo: merchantEvm,
          maxTimeoutSeconds: 60,
          extra: { ...USDC_DOMAIN, assetTransferMethod: "permit2" },
        },
      ],
    };
    return new Response("{}", {
      status: 402,
      headers: {
        "content-type": "application/json",
        "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required),
      },
    });
  });
  urls.permit2 = `${permit2Origin}/weather`;

  // The service, configured for these networks and sellers as for real ones.
  dir = await mkdtemp(join(tmpdir(), "foreign-sellers-"));
  const signersFile = join(dir, "signers.json");
  const solanaPayer = devnet.secrets.solana.payer;
  if (!solanaPayer) throw new Error("no Solana payer key");
  await writeFile(
    signersFile,
    JSON.stringify([
      { chain: "evm", privateKey: key("payer"), tokens: [TOKEN] },
      { chain: "solana", secretKey: [...solanaPayer], tokens: [TOKEN] },
    ]),
  );
  const origins = new Set(Object.values(urls).map((u) => new URL(u).origin));
  booted = await boot(devnet, {
    store: "pglite",
    models: models.registry,
    env: {
      PAYMENTS: "external",
      RPC_URLS: `${m.evm.network}=${m.evm.rpcUrl},${BASE_SEPOLIA.caip2}=${pose.rpcUrl},${solana.network}=${solana.rpcUrl}`,
      ASSETS: `${m.evm.network}=${m.evm.usdc},${BASE_SEPOLIA.caip2}=${pose.usdc},${solana.network}=${solana.usdcMint}`,
      ALLOW_PRIVATE_ORIGINS: [...origins].join(","),
      SIGNERS_FILE: signersFile,
    },
  });
}, 120_000);

afterAll(async () => {
  await booted?.close();
  for (const server of servers) await server.stop();
  for (const stop of stops.reverse()) await stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One chat turn in which the model pays `url` for the weather in Paris from `wallet`. */
async function payOnce(name: string, url: string, wallet: string): Promise<ChatResult> {
  const call = { toolName: "pay_and_fetch", input: { url, method: "GET", query: { city: "Paris" } } };
  const result = await chat(booted.running, {
    wallet,
    token: TOKEN,
    message: models.script(name, [[call]]),
  });
  streams.push(result.raw);
  return result;
}

/** The turn settled one payment of PRICE on `network`, recorded as settled in the ledger. */
async function expectSettled(result: ChatResult, network: string) {
  expect(result.finish.finishReason, result.raw.slice(-2000)).toBe("payment-complete");
  expect(result.payments.map((p) => p.status)).toEqual(
    expect.arrayContaining(["quoted", "signed", "submitted", "settled"]),
  );
  const settled = result.payments.find((p) => p.status === "settled");
  expect(settled).toMatchObject({ network, amount: { atomic: PRICE.toString() } });
  const rows = await rowsOf(booted.running, result);
  expect(rows).toHaveLength(1);
  const row = rows[0];
  if (!row) throw new Error("no ledger row");
  expect(row).toMatchObject({ status: "settled", network, amount: PRICE });
  return row;
}

describe("x402 v1 sellers built with the v1 package", () => {
  it("pays the v1 seller on Solana (solana-devnet): X-PAYMENT, maxAmountRequired, settled on the node", async () => {
    const solana = devnet.manifest.solana;
    if (!solana) throw new Error("no Solana");
    const before = await solanaBalances(devnet);
    const result = await payOnce("v1-solana", urls.v1Solana, walletAddress(devnet, "solana", "payer"));
    await expectSettled(result, solana.network);
    const after = await solanaBalances(devnet);
    expect(before.payer - after.payer).toBe(PRICE);
    expect(after.merchant - before.merchant).toBe(PRICE);
  });

  it("pays the v1 seller on base-sepolia (a chain with chain id 84532): settled on that chain", async () => {
    const payer = walletAddress(devnet, "evm", "payer");
    const merchant = walletAddress(devnet, "evm", "merchant");
    const before = [await pose.balance(payer), await pose.balance(merchant)];
    const result = await payOnce("v1-evm", urls.v1Evm, payer);
    const row = await expectSettled(result, BASE_SEPOLIA.caip2);
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect([await pose.balance(payer), await pose.balance(merchant)]).toEqual([
      (before[0] ?? 0n) - PRICE,
      (before[1] ?? 0n) + PRICE,
    ]);
  });
});

describe("Faremeter sellers", () => {
  it("pays a Faremeter seller on the devnet's EVM chain", async () => {
    const before = await evmBalances(devnet);
    const result = await payOnce("faremeter-evm", urls.faremeterEvm, walletAddress(devnet, "evm", "payer"));
    await expectSettled(result, devnet.manifest.evm.network);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(PRICE);
    expect(after.merchant - before.merchant).toBe(PRICE);
  });

  it("pays a Faremeter Solana seller offering maxTimeoutSeconds 0, within our default window", async () => {
    const solana = devnet.manifest.solana;
    if (!solana) throw new Error("no Solana");
    const before = await solanaBalances(devnet);
    const started = Math.floor(Date.now() / 1000);
    const result = await payOnce(
      "faremeter-solana",
      urls.faremeterSolana,
      walletAddress(devnet, "solana", "payer"),
    );
    const row = await expectSettled(result, solana.network);
    // The offer said 0; what was signed and recorded has a real, bounded window.
    expect((row.requirement as { maxTimeoutSeconds?: number }).maxTimeoutSeconds).toBe(0);
    const expiresAt = Number((row.authorization as { expiresAt?: string }).expiresAt);
    expect(expiresAt).toBeGreaterThan(started);
    expect(expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
    const after = await solanaBalances(devnet);
    expect(before.payer - after.payer).toBe(PRICE);
  });
});

describe("offers the service cannot sign", () => {
  it("refuses a Permit2-only seller before any reservation, naming the method", async () => {
    const before = await evmBalances(devnet);
    const result = await payOnce("permit2", urls.permit2, walletAddress(devnet, "evm", "payer"));
    expect(result.finish.finishReason).toBe("payment-failed");
    expect(result.errors.at(-1)).toMatchObject({ code: "payment_unavailable" });
    expect(JSON.stringify(result.errors)).toMatch(/permit2/);
    expect(JSON.stringify(result.errors)).toMatch(/unsupported_transfer_method/);
    expect(result.payments.map((p) => p.status)).not.toContain("reserved");
    expect(result.payments.map((p) => p.status)).not.toContain("signed");
    expect(await rowsOf(booted.running, result)).toEqual([]);
    expect(permit2PaidHits).toBe(0);
    expect(await evmBalances(devnet)).toEqual(before);
  });
});

describe("the devnet facilitator's x402 v1 side", () => {
  it("lists the v1 exact kind for the Solana node under its v1 name, with the fee payer", async () => {
    const response = await fetch(`${devnet.manifest.facilitatorUrl}/supported`);
    const { kinds } = (await response.json()) as {
      kinds: Array<{ x402Version: number; scheme: string; network: string; extra?: { feePayer?: string } }>;
    };
    expect(kinds).toContainEqual({
      x402Version: 1,
      scheme: "exact",
      network: "solana-devnet",
      extra: { feePayer: walletAddress(devnet, "solana", "facilitator") },
    });
  });

  it("refuses to register an EVM chain under a v1 name whose chain id it does not have", async () => {
    const m = devnet.manifest;
    const privateKey = devnet.secrets.evm.facilitator;
    if (!privateKey) throw new Error("no facilitator key");
    await expect(
      createFacilitator(
        {
          network: m.evm.network,
          chainId: m.evm.chainId,
          rpcUrl: m.evm.rpcUrl,
          privateKey,
          v1Network: "base-sepolia",
        },
        null,
      ),
    ).rejects.toThrow(/cannot answer to the x402 v1 name base-sepolia \(chain id 84532\)/);
  });
});

it("never shows a key or the dev token in any stream", () => {
  for (const raw of streams) for (const secret of secretStrings(devnet)) expect(raw).not.toContain(secret);
});

/** The v1 `base-sepolia` stand-in: a local chain whose chain id really is 84532. */
interface PosingChain {
  rpcUrl: string;
  usdc: `0x${string}`;
  balance(address: `0x${string}`): Promise<bigint>;
  stop(): Promise<void>;
}

/**
 * A Hardhat (EDR) chain with the given chain id, the devnet's token (EIP-712 domain "USD Coin"/"2",
 * which binds the chain id) and Multicall3, and the devnet's wallets funded as on the devnet. The
 * devnet's own chain is 31337; the v1 package's network names stand for public chains, and a v1
 * EVM signature is only valid on a chain with that network's id.
 */
async function startChainPosingAs(chainId: number): Promise<PosingChain> {
  const require = createRequire(import.meta.url);
  const { JsonRpcServer } = require("hardhat/internal/hardhat-network/jsonrpc/server") as {
    JsonRpcServer: new (config: {
      hostname: string;
      port: number;
      provider: EIP1193Provider;
    }) => {
      listen(): Promise<{ port: number }>;
      close(): Promise<void>;
      _httpServer: { closeAllConnections(): void };
    };
  };
  const provider = await createEdrProvider(0, {
    chainId,
    genesisKeys: [DEPLOYER_KEY, ...Object.values(devnet.secrets.evm)],
  });
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [] } },
  });
  const { contracts } = loadArtifacts();
  const deployer = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    chain,
    transport: custom(provider),
  }).extend(publicActions);
  await rawRequest(provider, "hardhat_setCode", [MULTICALL3_ADDRESS, contracts.Multicall3.deployedBytecode]);
  const deployed = await deployer.waitForTransactionReceipt({
    hash: await deployer.deployContract({ abi: contracts.DevUSDC.abi, bytecode: contracts.DevUSDC.bytecode }),
  });
  const usdc = deployed.contractAddress;
  if (!usdc) throw new Error("no token address");
  // This file's own wallets (useTestDevnet), with the devnet's starting balances.
  for (const wallet of devnet.manifest.evm.wallets.filter((w) => BigInt(w.usdcAtomic) > 0n)) {
    await deployer.waitForTransactionReceipt({
      hash: await deployer.writeContract({
        address: usdc,
        abi: contracts.DevUSDC.abi,
        functionName: "mint",
        args: [wallet.address, BigInt(wallet.usdcAtomic)],
      }),
    });
  }
  const server = new JsonRpcServer({ hostname: "127.0.0.1", port: 0, provider });
  const { port } = await server.listen();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const reader = createPublicClient({ chain, transport: http(rpcUrl) });
  return {
    rpcUrl,
    usdc,
    balance: (address) =>
      reader.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address] }),
    stop: async () => {
      const closing = server.close();
      server._httpServer.closeAllConnections();
      await closing;
      await provider.close();
    },
  };
}

/**
 * A Faremeter seller of the weather: Faremeter's Hono middleware over one of its in-process
 * facilitator handlers (given the capabilities and scheme its in-process routing asks for),
 * speaking x402 v2 and v1.
 */
async function faremeterSeller(
  handler: object,
  network: string,
  asset: string,
  payTo: string,
): Promise<(request: Request) => Response | Promise<Response>> {
  const app = new Hono();
  app.use(
    "/weather",
    await createMiddleware({
      x402Handlers: [
        { ...handler, capabilities: { networks: [network], assets: [asset] }, schemes: ["exact"] },
      ],
      pricing: [{ amount: PRICE.toString(), asset, recipient: payTo, network }],
      supportedVersions: { x402v1: true, x402v2: true },
    } as never),
  );
  app.get("/weather", (c) => c.json({ city: c.req.query("city"), conditions: "sunny", seller: "faremeter" }));
  return app.fetch;
}
