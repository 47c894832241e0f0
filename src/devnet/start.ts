import { randomBytes } from "node:crypto";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { Activity, countingFetch } from "./activity.js";
import { createControlApp, FAULTS_PATH } from "./control.js";
import {
  EVM_CHAIN_ID,
  EVM_NETWORK,
  type EvmChain,
  type EvmChainOptions,
  startEvmChain,
  USDC_DOMAIN,
} from "./evm/chain.js";
import { createFacilitatorApp, errorMessage, HangGate } from "./facilitator/app.js";
import { DiscoveryCatalog } from "./facilitator/catalog.js";
import { createFacilitator } from "./facilitator/schemes.js";
import { createFaucet } from "./faucet.js";
import { onFaultChange } from "./fault-effects.js";
import { FaultSwitch } from "./faults.js";
import { DevnetHttpServer } from "./http-server.js";
import { assertDevnetInstalled } from "./installed.js";
import { buildManifest, removeManifest, resolveManifestPath, writeManifest } from "./manifest.js";
import { createServiceApp, type PaymentRail } from "./services/app.js";
import { SERVICE_DEFINITIONS, type ServiceDefinition } from "./services/definitions.js";
import { startV1Sellers, v1RailsFor } from "./services/v1.js";
import {
  loadSolanaEngine,
  SOLANA_NETWORK,
  SOLANA_USDC_MINT,
  type SolanaNode,
  type SolanaNodeOptions,
  startSolanaEngine,
} from "./solana/node.js";
import type { Devnet, DevnetManifest, DevnetOptions } from "./types.js";

/** Node timings for tests, besides the public {@link DevnetOptions}; the defaults suit `npm start`. */
export interface DevnetTuning {
  evmChain?: EvmChainOptions;
  solanaNode?: SolanaNodeOptions;
}

/**
 * Starts the whole local x402 network in this process: an EVM chain (Hardhat EDR) with a
 * USDC-like EIP-3009 token, a Solana node (Surfpool) posing as devnet when available, a
 * facilitator with bazaar discovery, the paid demo services and a control server for faults.
 * Every server binds `host` on a random free port; `stop()` frees them all.
 *
 * @example
 * const devnet = await startDevnet({ manifestPath: null });
 * try { await fetch(devnet.manifest.services[0].url) } finally { await devnet.stop() }
 */
export async function startDevnet(options: DevnetOptions & DevnetTuning = {}): Promise<Devnet> {
  assertDevnetInstalled();
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? (() => {});
  const devToken = options.devToken ?? randomBytes(32).toString("hex");
  const manifestPath = resolveManifestPath(options.manifestPath);
  const faults = new FaultSwitch();
  const hangs = new HangGate();
  const late = new HangGate();
  const teardown: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    hangs.releaseAll();
    late.releaseAll();
    for (const step of teardown.splice(0).reverse()) {
      await step().catch((error: unknown) => log(`devnet: error while stopping: ${errorMessage(error)}`));
    }
  };

  try {
    const startedAt = new Date();
    const [evmResult, solanaResult] = await Promise.allSettled([
      startEvmChain(host, options.evmChain),
      startSolana(options.solana, options.solanaNode),
    ]);
    if (evmResult.status === "fulfilled") teardown.push(() => evmResult.value.stop());
    if (solanaResult.status === "fulfilled" && "node" in solanaResult.value) {
      const { node } = solanaResult.value;
      teardown.push(() => node.stop());
    }
    if (evmResult.status === "rejected") throw evmResult.reason;
    if (solanaResult.status === "rejected") throw solanaResult.reason;
    const evm = evmResult.value;
    const solana = "node" in solanaResult.value ? solanaResult.value.node : null;
    log(`devnet: EVM chain ${EVM_NETWORK} at ${evm.rpcUrl}, USDC ${evm.usdc}`);
    if (solana) log(`devnet: Solana ${SOLANA_NETWORK} at ${solana.rpcUrl} (${engineOf(solanaResult.value)})`);
    else if ("reason" in solanaResult.value) log(`devnet: Solana unavailable: ${solanaResult.value.reason}`);

    const catalog = new DiscoveryCatalog();
    const activity = new Activity();
    const facilitatorServer = new DevnetHttpServer(
      host,
      countingFetch(
        createFacilitatorApp({
          facilitator: await createFacilitator(
            {
              network: EVM_NETWORK,
              chainId: EVM_CHAIN_ID,
              rpcUrl: evm.rpcUrl,
              privateKey: walletOf(evm, "facilitator").privateKey,
            },
            solana
              ? {
                  network: SOLANA_NETWORK,
                  rpcUrl: solana.rpcUrl,
                  secretKey: solanaWalletOf(solana, "facilitator").secretKey,
                }
              : null,
          ),
          catalog,
          faults,
          hangUntilReleased: () => hangs.wait(),
          lateUntilReleased: () => late.wait(),
          log,
        }).fetch,
        activity,
      ),
    );
    await facilitatorServer.start();
    teardown.push(() => facilitatorServer.stop());
    log(`devnet: facilitator at ${facilitatorServer.url}`);

    const rails: PaymentRail[] = [
      {
        network: EVM_NETWORK,
        asset: evm.usdc,
        payTo: walletOf(evm, "merchant").address,
        extra: { ...USDC_DOMAIN },
      },
    ];
    if (solana) {
      rails.push({
        network: SOLANA_NETWORK,
        asset: SOLANA_USDC_MINT,
        payTo: solanaWalletOf(solana, "merchant").address,
      });
    }
    const services: Array<{ definition: ServiceDefinition; server: DevnetHttpServer; url: string }> = [];
    for (const definition of SERVICE_DEFINITIONS) {
      const server = new DevnetHttpServer(host);
      await server.start();
      teardown.push(() => server.stop());
      const url = `${server.url}${definition.path}`;
      const app = createServiceApp({ definition, url, facilitatorUrl: facilitatorServer.url, rails, faults });
      server.setHandler(countingFetch(app.fetch, activity, "serving"));
      services.push({ definition, server, url });
    }
    await Promise.all(
      services.map(async (s) => catalog.upsertFromPaymentRequired(await probeQuote(s.definition, s.url))),
    );
    log(`devnet: ${services.length} paid services listed in discovery`);
    const v1 = await startV1Sellers({
      host,
      facilitatorUrl: facilitatorServer.url,
      rails: v1RailsFor(rails),
      faults,
      onStop: (stop) => teardown.push(stop),
      log,
    });
    if (v1.reason) log(`devnet: no x402 v1 sellers: ${v1.reason}`);

    onFaultChange(faults, { hangs, late, facilitatorServer, services, log });

    let manifest: DevnetManifest | undefined;
    const control = new DevnetHttpServer(
      host,
      createControlApp(
        faults,
        devToken,
        () => {
          if (!manifest) throw new Error("manifest not ready");
          return manifest;
        },
        { activity: () => activity.snapshot(), fund: createFaucet(evm, solana) },
      ).fetch,
    );
    await control.start();
    teardown.push(() => control.stop());

    manifest = buildManifest({
      startedAt,
      devToken,
      facilitatorUrl: facilitatorServer.url,
      controlUrl: `${control.url}${FAULTS_PATH}`,
      services: services.map(({ definition, url }) => ({ definition, url })),
      networks: rails.map((r) => r.network),
      v1Services: v1.sellers,
      ...(v1.reason ? { v1ServicesUnavailableReason: v1.reason } : {}),
      evm,
      solana,
      ...("reason" in solanaResult.value ? { solanaUnavailableReason: solanaResult.value.reason } : {}),
    });
    if (manifestPath) {
      const written = manifest;
      teardown.push(() => removeManifest(manifestPath, written));
      await writeManifest(manifestPath, manifest);
      log(`devnet: manifest written to ${manifestPath}`);
    }

    let stopping: Promise<void> | undefined;
    const finalManifest = manifest;
    return {
      manifest: finalManifest,
      async announceChatUrl(url) {
        finalManifest.chatUrl = url;
        if (manifestPath && !stopping) await writeManifest(manifestPath, finalManifest);
      },
      secrets: {
        evm: Object.fromEntries(evm.wallets.map((w) => [w.name, w.privateKey])),
        solana: Object.fromEntries(
          (solana?.wallets ?? []).map((w) => [w.name, Uint8Array.from(w.secretKey)]),
        ),
      },
      faults: { set: (f) => faults.set(f), reset: () => faults.reset(), get: () => faults.get() },
      stop() {
        stopping ??= stopAll();
        return stopping;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function startSolana(
  wanted: boolean | undefined,
  nodeOptions?: SolanaNodeOptions,
): Promise<{ node: SolanaNode; engine: string } | { reason: string }> {
  if (wanted === false) return { reason: "disabled by option (solana: false)" };
  const loaded = loadSolanaEngine(nodeOptions?.engine);
  if ("reason" in loaded) {
    if (wanted === true) throw new Error(`Solana requested but unavailable: ${loaded.reason}`);
    return loaded;
  }
  try {
    return { node: await startSolanaEngine(loaded, nodeOptions), engine: loaded.name };
  } catch (error) {
    if (wanted === true) throw error;
    return { reason: `the Solana node (${loaded.name}) failed to start: ${errorMessage(error)}` };
  }
}

function engineOf(result: { engine?: string } | { reason: string }): string {
  return "engine" in result ? String(result.engine) : "?";
}

/** Asks a service for a quote the way a client would, and returns its decoded 402. */
async function probeQuote(definition: ServiceDefinition, url: string) {
  const example = definition.input.example;
  const response =
    definition.method === "GET"
      ? await fetch(`${url}?${new URLSearchParams(example)}`)
      : await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(example),
        });
  await response.arrayBuffer();
  const header = response.headers.get("payment-required");
  if (response.status !== 402 || !header) {
    throw new Error(`service ${definition.id} did not quote a price (HTTP ${response.status})`);
  }
  return decodePaymentRequiredHeader(header);
}

function walletOf(evm: EvmChain, name: string) {
  const wallet = evm.wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no EVM wallet ${name}`);
  return wallet;
}

function solanaWalletOf(node: SolanaNode, name: string) {
  const wallet = node.wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no Solana wallet ${name}`);
  return wallet;
}
