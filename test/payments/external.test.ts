import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap, type Running } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config/index.js";
import { silentLogger } from "../../src/log/index.js";
import { chat, evmBalances, priceOf, useTestDevnet } from "./harness.js";

/**
 * `PAYMENTS=external`: the service knows nothing of the devnet but what configuration says (RPC
 * URLs, discovery, the USDC asset, a signers file, allowed private origins), exactly as it would be
 * pointed at real networks.
 */
const devnet = useTestDevnet();
let running: Running;
let dir: string;
const token = "external-token-0123456789abcdef";

beforeAll(async () => {
  const m = devnet.manifest;
  const payer = m.evm.wallets.find((w) => w.role === "payer");
  const key = payer ? devnet.secrets.evm[payer.name] : undefined;
  if (!key) throw new Error("no payer key");
  dir = await mkdtemp(join(tmpdir(), "external-"));
  const signers = join(dir, "signers.json");
  await writeFile(signers, JSON.stringify([{ chain: "evm", privateKey: key, tokens: [token] }]));
  const origins = [m.facilitatorUrl, ...m.services.map((s) => s.url)].map((u) => new URL(u).origin);
  running = await bootstrap(
    loadConfig({
      PAYMENTS: "external",
      DATA_DIR: "memory://",
      RATE_LIMIT_POINTS: "1000",
      RATE_LIMIT_ANONYMOUS_POINTS: "1000",
      RPC_URLS: `${m.evm.network}=${m.evm.rpcUrl}`,
      ASSETS: `${m.evm.network}=${m.evm.usdc}`,
      DISCOVERY_URLS: m.discoveryUrl,
      ALLOW_PRIVATE_ORIGINS: [...new Set(origins)].join(","),
      SIGNERS_FILE: signers,
      LIMIT_DAILY: "5",
    }),
    silentLogger,
  );
});

afterAll(async () => {
  await running?.service.shutdown();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("payments configured for external networks", () => {
  it("discovers, pays and settles with a key from SIGNERS_FILE bound to its token", async () => {
    const payer = devnet.manifest.evm.wallets.find((w) => w.role === "payer")?.address ?? "";
    const before = await evmBalances(devnet);
    const result = await chat(running, { wallet: payer, token });
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(result.finish.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });

  it("reports the external mode and its configured networks on /healthz", async () => {
    const health = await running.service.app.request("/healthz");
    expect((await health.json()).payments).toMatchObject({
      mode: "external",
      networks: [devnet.manifest.evm.network],
    });
  });

  it("does not sign for the wallet without the bound token: it asks the wallet to approve", async () => {
    const payer = devnet.manifest.evm.wallets.find((w) => w.role === "payer")?.address ?? "";
    const result = await chat(running, { wallet: payer });
    expect(result.finish.finishReason).toBe("approval-required");
    expect(result.payments.map((p) => p.status)).toEqual(["quoted", "awaiting_approval"]);
    expect(result.payments.map((p) => p.status)).not.toContain("signed");
  });
});
