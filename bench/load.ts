import http from "node:http";

/**
 * A small closed-loop HTTP load generator: `concurrency` connections each send the next request as
 * soon as the previous one ends, for `durationMs`. It records, per request, the time to the first
 * byte and the time to the end of the stream (the `d:` line is the last line, so the end is `d:`).
 */
export interface LoadOptions {
  url: string;
  body: string;
  headers?: Record<string, string>;
  concurrency: number;
  durationMs: number;
  warmupMs?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  ttfb: { p50: number; p99: number };
  total: { p50: number; p99: number };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

function once(
  agent: http.Agent,
  options: LoadOptions,
): Promise<{ ttfb: number; total: number; ok: boolean }> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    let ttfb = -1;
    const req = http.request(
      options.url,
      {
        method: "POST",
        agent,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(options.body),
          ...options.headers,
        },
      },
      (res) => {
        res.on("data", () => {
          if (ttfb < 0) ttfb = Number(process.hrtime.bigint() - started) / 1e6;
        });
        res.on("end", () => {
          const total = Number(process.hrtime.bigint() - started) / 1e6;
          resolve({ ttfb, total, ok: res.statusCode === 200 });
        });
        res.on("error", () => resolve({ ttfb, total: 0, ok: false }));
      },
    );
    req.on("error", () => resolve({ ttfb: 0, total: 0, ok: false }));
    req.end(options.body);
  });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const warmupEnd = Date.now() + (options.warmupMs ?? 500);
  const ttfbs: number[] = [];
  const totals: number[] = [];
  let errors = 0;
  let measuredStart = 0;
  let measuredEnd = 0;
  const worker = async () => {
    while (Date.now() < warmupEnd) await once(agent, options);
    if (measuredStart === 0) measuredStart = Date.now();
    const stopAt = measuredStart + options.durationMs;
    while (Date.now() < stopAt) {
      const r = await once(agent, options);
      if (!r.ok) errors++;
      else {
        ttfbs.push(r.ttfb);
        totals.push(r.total);
      }
    }
    measuredEnd = Math.max(measuredEnd, Date.now());
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  agent.destroy();
  ttfbs.sort((a, b) => a - b);
  totals.sort((a, b) => a - b);
  const seconds = (measuredEnd - measuredStart) / 1000;
  return {
    requests: totals.length,
    errors,
    rps: totals.length / seconds,
    ttfb: { p50: percentile(ttfbs, 50), p99: percentile(ttfbs, 99) },
    total: { p50: percentile(totals, 50), p99: percentile(totals, 99) },
  };
}
