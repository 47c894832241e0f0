import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { EVM_CHAIN_ID, EVM_NETWORK, type EvmChain, MULTICALL3_ADDRESS } from "./evm/chain.js";
import { type ServiceDefinition, usdToAtomic } from "./services/definitions.js";
import { SOLANA_NETWORK, SOLANA_USDC_MINT, type SolanaNode } from "./solana/node.js";
import type { DevnetManifest } from "./types.js";

/** Default manifest location, relative to the working directory. */
export const DEFAULT_MANIFEST_PATH = ".data/devnet/manifest.json";

/**
 * Resolves where the manifest goes: the option wins (`null` = nowhere), then `$DEVNET_MANIFEST`,
 * then {@link DEFAULT_MANIFEST_PATH}.
 */
export function resolveManifestPath(option: string | null | undefined, env = process.env): string | null {
  if (option === null) return null;
  return resolve(option ?? env.DEVNET_MANIFEST ?? DEFAULT_MANIFEST_PATH);
}

/** Writes atomically (temp file + rename) so a reader never sees half a manifest. */
export async function writeManifest(path: string, manifest: DevnetManifest): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/**
 * Deletes the manifest on stop so a stale file never points at dead ports, but only if it is
 * still ours: another devnet may have written the same path since.
 */
export async function removeManifest(path: string, manifest: DevnetManifest): Promise<void> {
  try {
    const onDisk = JSON.parse(await readFile(path, "utf8")) as Partial<DevnetManifest>;
    if (onDisk.devToken === manifest.devToken && onDisk.startedAt === manifest.startedAt)
      await rm(path, { force: true });
  } catch {
    // Already gone or unreadable: nothing of ours to remove.
  }
}

/** The running parts the manifest describes. */
export interface ManifestInput {
  startedAt: Date;
  devToken: string;
  facilitatorUrl: string;
  controlUrl: string;
  services: Array<{ definition: ServiceDefinition; url: string }>;
  /** Networks every service accepts. */
  networks: string[];
  /** The x402 v1 sellers, each on its one network; or why there are none. */
  v1Services?: Array<{ id: string; definition: ServiceDefinition; url: string; networks: string[] }>;
  v1ServicesUnavailableReason?: string;
  evm: EvmChain;
  solana: SolanaNode | null;
  solanaUnavailableReason?: string;
}

/** Describes the running devnet with public data only: addresses, never keys. */
export function buildManifest(input: ManifestInput): DevnetManifest {
  const publicWallet = <A extends string>(w: {
    name: string;
    address: A;
    usdcAtomic: bigint;
    role: DevnetManifest["evm"]["wallets"][number]["role"];
  }) => ({
    name: w.name,
    address: w.address,
    usdcAtomic: w.usdcAtomic.toString(),
    role: w.role,
  });
  const { evm, solana } = input;
  return {
    version: 1,
    startedAt: input.startedAt.toISOString(),
    devToken: input.devToken,
    facilitatorUrl: input.facilitatorUrl,
    discoveryUrl: `${input.facilitatorUrl}/discovery/resources`,
    controlUrl: input.controlUrl,
    services: input.services.map(({ definition: d, url }) => ({
      id: d.id,
      name: d.name,
      description: d.description,
      url,
      method: d.method,
      priceUsd: d.priceUsd,
      priceAtomic: usdToAtomic(d.priceUsd).toString(),
      networks: [...input.networks],
    })),
    v1Services: (input.v1Services ?? []).map(({ id, definition: d, url, networks }) => ({
      id,
      name: `${d.name} (x402 v1 seller)`,
      description: d.description,
      url,
      method: d.method,
      priceUsd: d.priceUsd,
      priceAtomic: usdToAtomic(d.priceUsd).toString(),
      networks: [...networks],
    })),
    ...(input.v1ServicesUnavailableReason
      ? { v1ServicesUnavailableReason: input.v1ServicesUnavailableReason }
      : {}),
    evm: {
      network: EVM_NETWORK,
      chainId: EVM_CHAIN_ID,
      rpcUrl: evm.rpcUrl,
      usdc: evm.usdc,
      multicall3: MULTICALL3_ADDRESS,
      wallets: evm.wallets.map(publicWallet),
    },
    solana: solana
      ? {
          network: SOLANA_NETWORK,
          rpcUrl: solana.rpcUrl,
          wsUrl: solana.wsUrl,
          usdcMint: SOLANA_USDC_MINT,
          wallets: solana.wallets.map(publicWallet),
        }
      : null,
    ...(input.solanaUnavailableReason ? { solanaUnavailableReason: input.solanaUnavailableReason } : {}),
  };
}
