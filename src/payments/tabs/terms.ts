import { familyOf } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { OpenTabRequest } from "../../protocol/index.js";
import type { TabsConfig } from "./types.js";

/**
 * What a tab asked for may be, here: a network of the wallet's family that can hold session keys
 * and has a USD asset (the request's, else the first such), at most the largest tab, for at most
 * the longest time. `tab_unsupported` or `tab_invalid` otherwise.
 */
export function tabTerms(
  config: Pick<TabsConfig, "assets" | "rpcUrls" | "maxAmount" | "defaultSeconds" | "maxSeconds">,
  input: OpenTabRequest,
): { network: string; asset: string; seconds: number } {
  // Session keys of its family, and an RPC URL: the tab is funded, watched and returned on chain.
  const holds = (n: string) => familyOf(n)?.keyFromSeed !== undefined && Object.hasOwn(config.rpcUrls, n);
  const network =
    input.network ??
    Object.keys(config.assets).find((n) => familyOf(n)?.name === input.wallet.chain && holds(n));
  const asset = network ? config.assets[network]?.[0] : undefined;
  if (!network || !asset || !holds(network) || familyOf(network)?.name !== input.wallet.chain) {
    throw new AppError(
      "tab_unsupported",
      `No tab can be opened for this wallet on ${network ?? "any network"} here.`,
      { details: { networks: Object.keys(config.assets).filter(holds) } },
    );
  }
  if (input.amount > config.maxAmount) {
    throw new AppError("tab_invalid", `A tab holds at most $${formatUsd(config.maxAmount)} here.`, {
      details: { maxUsd: formatUsd(config.maxAmount) },
    });
  }
  // Longer than allowed is refused as a larger amount is, never quietly cut short.
  if (input.seconds !== undefined && input.seconds > config.maxSeconds) {
    throw new AppError("tab_invalid", `A tab lasts at most ${config.maxSeconds} s here.`, {
      details: { maxSeconds: config.maxSeconds },
    });
  }
  return { network, asset, seconds: input.seconds ?? config.defaultSeconds };
}
