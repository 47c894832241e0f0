/**
 * Counts and times every JSON-RPC call this process makes to one endpoint (the Solana node), by
 * method, through the global `fetch` (what `@solana/kit`'s HTTP transport calls). The service,
 * its facilitator, its x402 client and its reconciler all run in the soak's process, so this sees
 * every Solana RPC a payment costs. Install before the calls start; `take()` returns the calls
 * since the last take and starts a new interval.
 */

export interface MethodStats {
  calls: number;
  p50: number;
  max: number;
}

export interface RpcMeter {
  /** The endpoint to meter (known once the devnet started); calls to other URLs pass untouched. */
  watch(url: string): void;
  take(): Record<string, MethodStats>;
  /** Calls per method since install. */
  totals(): Record<string, number>;
  uninstall(): void;
}

const methodOf = (body: unknown): string => {
  if (typeof body !== "string") return "?";
  const match = /"method"\s*:\s*"([A-Za-z_]+)"/.exec(body);
  return match?.[1] ?? "?";
};

export function installRpcMeter(): RpcMeter {
  const original = globalThis.fetch;
  let watched: string | undefined;
  let window = new Map<string, number[]>();
  const totals = new Map<string, number>();
  const metered: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (watched === undefined || url.replace(/\/$/, "") !== watched) return original(input, init);
    const method = methodOf(init?.body);
    const start = performance.now();
    try {
      return await original(input, init);
    } finally {
      const list = window.get(method) ?? [];
      list.push(performance.now() - start);
      window.set(method, list);
      totals.set(method, (totals.get(method) ?? 0) + 1);
    }
  };
  globalThis.fetch = metered;
  return {
    watch(url) {
      watched = url.replace(/\/$/, "");
    },
    take() {
      const out: Record<string, MethodStats> = {};
      for (const [method, times] of window) {
        const sorted = [...times].sort((a, b) => a - b);
        out[method] = {
          calls: times.length,
          p50: sorted[Math.ceil(sorted.length / 2) - 1] ?? Number.NaN,
          max: sorted.at(-1) ?? Number.NaN,
        };
      }
      window = new Map();
      return out;
    },
    totals: () => Object.fromEntries(totals),
    uninstall() {
      if (globalThis.fetch === metered) globalThis.fetch = original;
    },
  };
}
