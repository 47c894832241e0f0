import { randomBytes } from "node:crypto";
import { Activity, countingFetch } from "./activity.js";
import { type DevnetChains, solanaWalletOf, startChains, walletOf } from "./chains.js";
import { createControlApp, FAULTS_PATH } from "./control.js";
import { EVM_CHAIN_ID, EVM_NETWORK, type EvmChainOptions } from "./evm/chain.js";
import { createFacilitatorApp, errorMessage, HangGate } from "./facilitator/app.js";
import { DiscoveryCatalog } from "./facilitator/catalog.js";
import { createFacilitator } from "./facilitator/schemes.js";
import { createFaucet } from "./faucet.js";
import { onFaultChange } from "./fault-effects.js";
import { FaultSwitch } from "./faults.js";
import { boundHeapGrowth } from "./heap.js";
import { DevnetHttpServer } from "./http-server.js";
import { assertDevnetInstalled } from "./installed.js";
import { buildManifest, removeManifest, resolveManifestPath, writeManifest } from "./manifest.js";
import { paymentRails, startServices } from "./services/start.js";
import { startV1Sellers, v1RailsFor } from "./services/v1.js";
import { SOLANA_NETWORK, type SolanaNodeOptions } from "./solana/node.js";
import type { Devnet, DevnetManifest, DevnetOptions } from "./types.js";

/** Node timings for tests, besides the public {@link DevnetOptions}; the defaults suit `npm start`. */
export interface DevnetTuning {
  evmChain?: EvmChainOptions;
  solanaNode?: SolanaNodeOptions;
}

/**
 * Starts the whole local x402 network in this process: an EVM chain (Hardhat EDR) with a
 * USDC-like EIP-3009 token, a Solana node (LiteSVM) posing as devnet when available, a
 * facilitator with bazaar discovery, the paid demo services and a control server for faults.
 * Every server binds `host` on a random free port; `stop()` frees them all.
 *
 * @example
 * const devnet = await startDevnet({ manifestPath: null });
 * try { await fetch(devnet.manifest.services[0].url) } finally { await devnet.stop() }
 */
export async function startDevnet(options: DevnetOptions & DevnetTuning = {}): Promise<Devnet> {
  assertDevnetInstalled();
  // A devnet left running for a day: its process's memory stays flat (./heap.ts).
  boundHeapGrowth();
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? (() => {});
  const devToken = options.devToken ?? randomBytes(32).toString("hex");
  const manifestPath = resolveManifestPath(options.manifestPath);
  const faults = new FaultSwitch();
  const hangs = new HangGate();
  const late = new HangGate();
  const teardown: Array<() => Promise<void>> = [];
  const onStop = (stop: () => Promise<void>) => {
    teardown.push(stop);
  };
  const stopAll = async () => {
    hangs.releaseAll();
    late.releaseAll();
    for (const step of teardown.splice(0).reverse()) {
      await step().catch((error: unknown) => log(`devnet: error while stopping: ${errorMessage(error)}`));
    }
  };

  try {
    const startedAt = new Date();
    const chains = await startChains(host, { ...options, log }, onStop);
    const { evm, solana } = chains;
    log(`devnet: EVM chain ${EVM_NETWORK} at ${evm.rpcUrl}, USDC ${evm.usdc}`);
    if (solana) log(`devnet: Solana ${SOLANA_NETWORK} at ${solana.rpcUrl} (LiteSVM)`);
    else if (chains.solanaUnavailable !== undefined)
      log(`devnet: Solana unavailable: ${chains.solanaUnavailable}`);

    const catalog = new DiscoveryCatalog();
    const activity = new Activity();
    const facilitatorServer = await startFacilitator(
      host,
      chains,
      { catalog, faults, hangs, late, activity, log },
      onStop,
    );

    const rails = paymentRails(chains);
    const facilitatorUrl = facilitatorServer.url;
    const services = await startServices({ host, facilitatorUrl, rails, faults, activity, catalog, onStop });
    log(`devnet: ${services.length} paid services listed in discovery`);
    const v1 = await startV1Sellers({ host, facilitatorUrl, rails: v1RailsFor(rails), faults, onStop, log });
    if (v1.reason) log(`devnet: no x402 v1 sellers: ${v1.reason}`);

    onFaultChange(faults, { hangs, late, facilitatorServer, services, log });

    let manifest: DevnetManifest | undefined;
    const control = await startControl(host, devToken, { faults, activity, chains }, () => manifest, onStop);

    manifest = buildManifest({
      startedAt,
      devToken,
      facilitatorUrl,
      controlUrl: `${control.url}${FAULTS_PATH}`,
      services: services.map(({ definition, url }) => ({ definition, url })),
      networks: rails.map((r) => r.network),
      v1Services: v1.sellers,
      ...(v1.reason ? { v1ServicesUnavailableReason: v1.reason } : {}),
      evm,
      solana,
      ...(chains.solanaUnavailable !== undefined
        ? { solanaUnavailableReason: chains.solanaUnavailable }
        : {}),
    });
    if (manifestPath) {
      const written = manifest;
      onStop(() => removeManifest(manifestPath, written));
      await writeManifest(manifestPath, manifest);
      log(`devnet: manifest written to ${manifestPath}`);
    }
    return devnetHandle(manifest, manifestPath, chains, faults, stopAll);
  } catch (error) {
    await stopAll();
    throw error;
  }
}

interface FacilitatorParts {
  catalog: DiscoveryCatalog;
  faults: FaultSwitch;
  /** Held settlements (the settleHangAfterChain and settleLate faults), released when they are lifted. */
  hangs: HangGate;
  late: HangGate;
  activity: Activity;
  log: (line: string) => void;
}

/** The facilitator, with bazaar discovery, on a server of its own. */
async function startFacilitator(
  host: string,
  chains: DevnetChains,
  parts: FacilitatorParts,
  onStop: (stop: () => Promise<void>) => void,
): Promise<DevnetHttpServer> {
  const { hangs, late, log } = parts;
  const server = new DevnetHttpServer(
    host,
    countingFetch(
      createFacilitatorApp({
        facilitator: await facilitatorOf(chains),
        catalog: parts.catalog,
        faults: parts.faults,
        hangUntilReleased: () => hangs.wait(),
        lateUntilReleased: () => late.wait(),
        log,
      }).fetch,
      parts.activity,
    ),
  );
  await server.start();
  onStop(() => server.stop());
  log(`devnet: facilitator at ${server.url}`);
  return server;
}

/** The facilitator's schemes: the EVM chain's, and Solana's when it runs; it pays fees from its wallets. */
function facilitatorOf({ evm, solana }: DevnetChains) {
  return createFacilitator(
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
  );
}

/** The control server (faults, activity, the faucet); it serves the manifest once there is one. */
async function startControl(
  host: string,
  devToken: string,
  { faults, activity, chains }: { faults: FaultSwitch; activity: Activity; chains: DevnetChains },
  manifest: () => DevnetManifest | undefined,
  onStop: (stop: () => Promise<void>) => void,
): Promise<DevnetHttpServer> {
  const control = new DevnetHttpServer(
    host,
    createControlApp(
      faults,
      devToken,
      () => {
        const ready = manifest();
        if (!ready) throw new Error("manifest not ready");
        return ready;
      },
      { activity: () => activity.snapshot(), fund: createFaucet(chains.evm, chains.solana) },
    ).fetch,
  );
  await control.start();
  onStop(() => control.stop());
  return control;
}

/** What the caller holds of a running devnet; `stop` runs once however often it is called. */
function devnetHandle(
  manifest: DevnetManifest,
  manifestPath: string | null,
  { evm, solana }: DevnetChains,
  faults: FaultSwitch,
  stopAll: () => Promise<void>,
): Devnet {
  let stopping: Promise<void> | undefined;
  return {
    manifest,
    async announceChatUrl(url) {
      manifest.chatUrl = url;
      if (manifestPath && !stopping) await writeManifest(manifestPath, manifest);
    },
    secrets: {
      evm: Object.fromEntries(evm.wallets.map((w) => [w.name, w.privateKey])),
      solana: Object.fromEntries((solana?.wallets ?? []).map((w) => [w.name, Uint8Array.from(w.secretKey)])),
    },
    faults: { set: (f) => faults.set(f), reset: () => faults.reset(), get: () => faults.get() },
    evmChainPid: () => evm.pid,
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
  };
}
