import { approvalUrl, type Config, ConfigError } from "./config/index.js";
import type { Devnet } from "./devnet/index.js";
import type { DevnetUserWallets } from "./http/devnet-wallet.js";
import type { Logger } from "./log/index.js";
import { type PaymentsOptions, readSignersFile, type SignerKey } from "./payments/index.js";
import type { Store } from "./store/index.js";

/**
 * Part of the composition root (bootstrap.ts): where the payments' networks, services and keys
 * come from (the embedded devnet's manifest, or the environment), and the options payments are
 * created with.
 */

export type DevnetHandle = Pick<Devnet, "manifest" | "secrets">;

export interface PaymentSources {
  discoveryUrls: string[];
  rpcUrls: Record<string, string>;
  assets: Record<string, string[]>;
  allowedNetworks: string[];
  allowPrivateOrigins: string[];
  signerKeys: SignerKey[];
  banner: string[];
  /** The embedded devnet's facilitator (tabs settle their transfers there). */
  facilitatorUrl?: string;
}

/** What the service reads from a devnet: its manifest and the funded wallets' keys. */

export function fromDevnet(devnet: DevnetHandle): PaymentSources {
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
    facilitatorUrl: m.facilitatorUrl,
  };
}

/** The devnet's `user` wallets (no server-held key) with their published test keys, for the web page. */
export function devnetUserWallets(devnet: DevnetHandle): DevnetUserWallets {
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

/** SIGNERS_FILE's keys; a file that cannot be used is a configuration error (its message names no key). */
function signersFrom(path: string): Promise<SignerKey[]> {
  return readSignersFile(path).catch((error: unknown) => {
    throw new ConfigError(error instanceof Error ? error.message : `SIGNERS_FILE: ${path} cannot be used`);
  });
}

export async function fromEnv(config: Config): Promise<PaymentSources> {
  const p = config.payments;
  return {
    discoveryUrls: p.discoveryUrls,
    rpcUrls: p.rpcUrls,
    assets: p.assets,
    allowedNetworks: p.limits.allowedNetworks ?? Object.keys(p.rpcUrls),
    allowPrivateOrigins: p.allowPrivateOrigins,
    signerKeys: p.signersFile ? await signersFrom(p.signersFile) : [],
    banner: [`Payments on ${Object.keys(p.rpcUrls).join(", ") || "no network (set RPC_URLS)"}`],
  };
}

/** The payment capability's options: the configuration, where it pays, and the store. */
export function paymentsOptions(
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
    delivered: store.delivered,
    approvalUrl: (paymentId) => approvalUrl(config.publicUrl, paymentId),
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
