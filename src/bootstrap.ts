import type { Config } from "./config/index.js";
import { type Devnet, startDevnet } from "./devnet/index.js";
import { type DevnetUserWallets, mountDevnetWallets } from "./http/devnet-wallet.js";
import { chainCheck } from "./http/readiness.js";
import type { Logger } from "./log/index.js";
import type { ModelRegistry } from "./models/index.js";
import {
  createPayments,
  type Payments,
  type PaymentsOptions,
  readSignersFile,
  type SignerKey,
} from "./payments/index.js";
import { explorerTxUrl } from "./protocol/index.js";
import { createService, type Service } from "./service.js";
import { openStore, type Store } from "./store/index.js";

/**
 * The composition root for a running process: config -> (embedded devnet) -> store and payments ->
 * agent -> HTTP app. `main.ts` calls it; integration tests and benchmarks call it too.
 */
export interface Running {
  service: Service;
  payments?: Payments;
  /** The ledger's store (PGlite or a server); closed by the service's shutdown. */
  store?: Store;
  /** The embedded devnet this process started (not one passed in {@link BootstrapOptions}). */
  devnet?: Devnet;
  /** Lines for people: URLs, wallets, the dev token. Never private keys. */
  banner: string[];
}

interface PaymentSources {
  discoveryUrls: string[];
  rpcUrls: Record<string, string>;
  assets: Record<string, string[]>;
  allowedNetworks: string[];
  allowPrivateOrigins: string[];
  signerKeys: SignerKey[];
  banner: string[];
}

/** What the service reads from a devnet: its manifest and the funded wallets' keys. */
export type DevnetHandle = Pick<Devnet, "manifest" | "secrets">;

function fromDevnet(devnet: DevnetHandle): PaymentSources {
  const m = devnet.manifest;
  const rpcUrls: Record<string, string> = { [m.evm.network]: m.evm.rpcUrl };
  const assets: Record<string, string[]> = { [m.evm.network]: [m.evm.usdc] };
  const signerKeys: SignerKey[] = [];
  const banner = [
    "Embedded devnet (local chains and demo services; their data is simulated):",
    `  discovery   ${m.discoveryUrl}`,
    `  EVM         ${m.evm.network} at ${m.evm.rpcUrl}, USDC ${m.evm.usdc}`,
  ];
  for (const w of m.evm.wallets.filter((w) => w.role === "payer" || w.role === "payer-low")) {
    const key = devnet.secrets.evm[w.name];
    if (key) signerKeys.push({ chain: "evm", privateKey: key, tokens: [m.devToken] });
    banner.push(`    wallet ${w.name.padEnd(10)} ${w.address}  ${Number(w.usdcAtomic) / 1e6} USDC`);
  }
  for (const w of m.evm.wallets.filter((w) => w.role === "user"))
    banner.push(
      `    wallet ${w.name.padEnd(10)} ${w.address}  ${Number(w.usdcAtomic) / 1e6} USDC  (approves in its own wallet)`,
    );
  if (m.solana) {
    rpcUrls[m.solana.network] = m.solana.rpcUrl;
    assets[m.solana.network] = [m.solana.usdcMint];
    banner.push(`  Solana      ${m.solana.network} at ${m.solana.rpcUrl}, USDC ${m.solana.usdcMint}`);
    for (const w of m.solana.wallets.filter((w) => w.role === "payer" || w.role === "payer-low")) {
      const key = devnet.secrets.solana[w.name];
      if (key) signerKeys.push({ chain: "solana", secretKey: key, tokens: [m.devToken] });
      banner.push(`    wallet ${w.name.padEnd(10)} ${w.address}  ${Number(w.usdcAtomic) / 1e6} USDC`);
    }
    for (const w of m.solana.wallets.filter((w) => w.role === "user"))
      banner.push(
        `    wallet ${w.name.padEnd(10)} ${w.address}  ${Number(w.usdcAtomic) / 1e6} USDC  (approves in its own wallet)`,
      );
  } else {
    banner.push(`  Solana      unavailable: ${m.solanaUnavailableReason ?? "not started"}`);
  }
  banner.push(
    `  dev token   ${m.devToken}   (send as Authorization: Bearer <token> to pay from these wallets)`,
  );
  const origins = [
    ...new Set(
      [m.facilitatorUrl, ...m.services.map((s) => s.url), ...m.v1Services.map((s) => s.url)].map(
        (u) => new URL(u).origin,
      ),
    ),
  ];
  return {
    discoveryUrls: [m.discoveryUrl],
    rpcUrls,
    assets,
    allowedNetworks: Object.keys(rpcUrls),
    allowPrivateOrigins: origins,
    signerKeys,
    banner,
  };
}

/** The devnet's `user` wallets (no server-held key) with their published test keys, for the web page. */
function devnetUserWallets(devnet: DevnetHandle): DevnetUserWallets {
  const m = devnet.manifest;
  const evm = m.evm.wallets.find((w) => w.role === "user");
  const evmKey = evm && devnet.secrets.evm[evm.name];
  const solana = m.solana?.wallets.find((w) => w.role === "user");
  const solanaKey = solana && devnet.secrets.solana[solana.name];
  return {
    evm:
      evm && evmKey
        ? {
            name: evm.name,
            network: m.evm.network,
            chainId: m.evm.chainId,
            address: evm.address,
            privateKey: evmKey,
          }
        : null,
    solana:
      m.solana && solana && solanaKey
        ? { name: solana.name, network: m.solana.network, address: solana.address, secretKey: solanaKey }
        : null,
  };
}

async function fromEnv(config: Config): Promise<PaymentSources> {
  const p = config.payments;
  return {
    discoveryUrls: p.discoveryUrls,
    rpcUrls: p.rpcUrls,
    assets: p.assets,
    allowedNetworks: p.limits.allowedNetworks ?? Object.keys(p.rpcUrls),
    allowPrivateOrigins: p.allowPrivateOrigins,
    signerKeys: p.signersFile ? await readSignersFile(p.signersFile) : [],
    banner: [`Payments on ${Object.keys(p.rpcUrls).join(", ") || "no network (set RPC_URLS)"}`],
  };
}

/** The payment capability's options: the configuration, where it pays, and the store. */
function paymentsOptions(
  config: Config,
  sources: PaymentSources,
  store: Store,
  logger: Logger,
  now: (() => Date) | undefined,
): PaymentsOptions {
  const p = config.payments;
  // ALLOW_PRIVATE_ORIGINS holds in every mode; the devnet only adds its own origins to it.
  const allowPrivateOrigins = [...new Set([...sources.allowPrivateOrigins, ...p.allowPrivateOrigins])];
  return {
    ledger: store.ledger,
    history: store.history,
    discoveryUrls: sources.discoveryUrls,
    ...(p.catalogFile ? { catalogFile: p.catalogFile } : {}),
    rpcUrls: sources.rpcUrls,
    assets: sources.assets,
    allowPrivateOrigins,
    signerKeys: sources.signerKeys,
    preferredNetworks: p.preferredNetworks,
    limits: {
      defaults: p.limits.defaults,
      caps: p.limits.caps,
      allowedNetworks: sources.allowedNetworks,
      allowedServices: p.limits.allowedServices,
      ...(p.limits.approvalAbove !== undefined ? { approvalAbove: p.limits.approvalAbove } : {}),
    },
    maxTimeoutSeconds: p.maxTimeoutSeconds,
    minTimeLeftMs: p.minTimeLeftMs,
    serviceTimeoutMs: p.serviceTimeoutMs,
    reconcileIntervalMs: p.reconcileIntervalMs,
    ...(p.quoteSecret ? { quoteSecret: p.quoteSecret } : {}),
    // With its causes: a store error's cause is the driver error (the query), for the log only.
    onError: (error, context = "background") => logger.warn("payments error", { context, err: error }),
    ...(now ? { now } : {}),
  };
}

export interface BootstrapOptions {
  /** Where the embedded devnet writes its manifest (null: nowhere). */
  devnetManifest?: string | null;
  /**
   * Reuse a devnet that is already running (tests share one, possibly in another process: only its
   * manifest and keys are read); it is not stopped on shutdown.
   */
  devnet?: DevnetHandle;
  /** Replace the model registry (tests script the model). */
  models?: ModelRegistry;
  /**
   * The one clock of the service and its payments (deadlines, leases, limits' 24 h window,
   * approval windows, reconciliation); default the system's.
   */
  now?: () => Date;
}

export async function bootstrap(
  config: Config,
  logger: Logger,
  options: BootstrapOptions = {},
): Promise<Running> {
  const p = config.payments;
  if (p.mode === "off") {
    return {
      service: createService(config, logger),
      banner: ["Payments are off (PAYMENTS=off): the agent only talks."],
    };
  }
  const ownDevnet = p.mode === "devnet" && !options.devnet;
  // The store needs nothing from the devnet: it opens while the devnet starts (start-up time,
  // docs/benchmarks.md). If either fails, the other is closed before the error goes on.
  const storeOpening = openStore({
    ...(p.databaseUrl ? { databaseUrl: p.databaseUrl } : {}),
    ...(p.databaseSchema ? { schema: p.databaseSchema } : {}),
    dataDir: p.dataDir === "memory://" ? "memory://" : `${p.dataDir}/pglite`,
  });
  storeOpening.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  let devnet: DevnetHandle | undefined;
  let own: Devnet | undefined;
  try {
    if (ownDevnet)
      own = await startDevnet({
        ...(options.devnetManifest !== undefined ? { manifestPath: options.devnetManifest } : {}),
        log: (line) => logger.info("devnet", { line }),
      });
    devnet = p.mode !== "devnet" ? undefined : (options.devnet ?? own);
  } catch (error) {
    await storeOpening.then((opened) => opened.close()).catch(() => {});
    throw error;
  }
  let store: Store | undefined;
  try {
    store = await storeOpening;
    const opened = store;
    const sources = devnet ? fromDevnet(devnet) : await fromEnv(config);
    const payments = createPayments(paymentsOptions(config, sources, opened, logger, options.now));
    const tokens = bearerTokens(config, sources.signerKeys, devnet !== undefined);
    const service = createService({ ...config, auth: { ...config.auth, tokens } }, logger, {
      ...(options.models ? { models: options.models } : {}),
      ...(options.now ? { now: options.now } : {}),
      tools: payments.tools,
      resumeApproval: payments.resumeApproval,
      payments: {
        get: (id) => payments.ledger.get(id),
        list: (query) => opened.history.listByCaller(query),
        // The embedded devnet's chains are on this machine only: no public explorer has them.
        explorer: (network, tx) =>
          devnet && Object.hasOwn(sources.rpcUrls, network) ? undefined : explorerTxUrl(network, tx),
      },
      rebuild: payments.rebuild,
      // POST /mcp on the same face, wallet rules and ledger (docs/mcp.md).
      mcp: { face: payments.face, approvalUrl: (id) => approvalPage(config, id) },
      idempotency: opened.idempotency,
      health: () => ({
        payments: { mode: p.mode, store: opened.kind, networks: sources.allowedNetworks },
      }),
      // GET /readyz: a primary-key lookup on the ledger (no row), and one RPC call per network.
      readiness: [
        { name: "store", kind: "store", check: () => payments.ledger.get("readyz").then(() => undefined) },
        ...Object.keys(sources.rpcUrls).map((network) =>
          chainCheck(network, (signal) => payments.pingChain(network, signal)),
        ),
      ],
      onShutdown: async () => {
        await payments.close();
        await opened.close();
        await own?.stop();
      },
    });
    // The web page's "devnet wallet": only while the embedded devnet runs, never with real networks.
    if (devnet) mountDevnetWallets(service.app, devnetUserWallets(devnet));
    // Everything is wired: now start what runs on its own (reconciliation).
    await payments.start();
    return { service, payments, store: opened, ...(own ? { devnet: own } : {}), banner: sources.banner };
  } catch (error) {
    await store?.close().catch(() => {});
    await own?.stop();
    throw error;
  }
}

/**
 * The approval page of a payment (the web app's `/approve/<paymentId>`), on this service's own
 * address. The approval page's branch brings PUBLIC_URL for services behind a proxy.
 */
function approvalPage(config: Config, paymentId: string): string {
  return new URL(`/approve/${encodeURIComponent(paymentId)}`, `http://${config.host}:${config.port}`).href;
}

/** The configured bearer tokens, and those bound to server-held keys (valid for the chat too). */
function bearerTokens(config: Config, signerKeys: SignerKey[], devnet: boolean): Map<string, string> {
  const tokens = new Map(config.auth.tokens);
  signerKeys.forEach((key, i) => {
    for (const token of key.tokens)
      if (!tokens.has(token)) tokens.set(token, devnet ? "devnet" : `signer-${i + 1}`);
  });
  return tokens;
}
