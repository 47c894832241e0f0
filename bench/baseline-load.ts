import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

/**
 * The scale baseline's load (bench/baseline.ts): N payments at a given concurrency, by bare
 * `@x402/fetch` clients or by paid chat turns, timed per phase. It runs in a worker thread of its
 * own, so neither path's client work (the bare clients' signing, the chat clients' stream reading)
 * lands on the event loop of the devnet, which runs in the bench's main thread
 * (docs/benchmarks.md#scale-baseline).
 */
export type LoadJob = (
  | {
      kind: "bare";
      name: string;
      turns: number;
      concurrency: number;
      url: string;
      network: string;
      payerKey: `0x${string}`;
    }
  | {
      kind: "chat";
      name: string;
      turns: number;
      concurrency: number;
      /** Turn i goes to instance i % bases.length. */
      bases: string[];
      token: string;
      wallet: string;
    }
) & {
  /**
   * Payments made first, untimed, by the same clients at the same concurrency, so every path is
   * measured warm (V8's compiled code, connections, caches) rather than on its first payments.
   */
  warmup?: number;
};

export interface Sample {
  ms: number;
  ok: boolean;
  /** Phase name -> ms since the previous phase. */
  phases: Record<string, number>;
  /** Why it failed (a finish reason, an HTTP status, an error). */
  failure?: string;
}

export interface PathResult {
  name: string;
  wallMs: number;
  samples: Sample[];
  /** Warm-up payments that succeeded (paid, untimed). */
  warmedUp?: number;
}

const now = () => performance.now();

/** Run `turns` tasks, `concurrency` at a time; task i gets its slot (0..concurrency-1). */
export async function measureRun(
  name: string,
  shape: { turns: number; concurrency: number },
  task: (slot: number, i: number) => Promise<Sample>,
): Promise<PathResult> {
  const samples: Sample[] = [];
  let next = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: shape.concurrency }, async (_, slot) => {
      while (next < shape.turns) {
        const i = next++;
        const sample = await task(slot, i).catch(
          (error: unknown): Sample => ({
            ms: Number.NaN,
            ok: false,
            phases: {},
            failure: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 80) : String(error),
          }),
        );
        if (sample.failure) process.stderr.write(`baseline: ${name}: ${sample.failure}\n`);
        samples.push(sample);
      }
    }),
  );
  return { name, wallMs: now() - started, samples };
}

/** One bare client: `@x402/fetch` over a fetch that notes when the 402 came back. */
export function bareClient(network: string, payerKey: `0x${string}`): (url: string) => Promise<Sample> {
  let quoted = 0;
  const timing: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 402) quoted = now();
    return response;
  };
  const client = new x402Client().register(
    network as `${string}:${string}`,
    new ExactEvmScheme(privateKeyToAccount(payerKey)),
  );
  client.setSpendControls(false);
  const paying = wrapFetchWithPayment(timing, client);
  return async (url) => {
    const start = now();
    const response = await paying(url);
    await response.text();
    const end = now();
    return {
      ms: end - start,
      ok: response.status === 200,
      ...(response.status === 200 ? {} : { failure: `HTTP ${response.status}` }),
      phases: { "to 402": quoted - start, "to paid answer": end - quoted },
    };
  };
}

/** One paid chat turn, timed per phase from the stream's lines as they arrive. */
export async function chatTurn(base: string, token: string, wallet: string): Promise<Sample> {
  const start = now();
  const response = await fetch(`${base}/api/chat`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      messages: [{ role: "user", content: "What's the weather in Paris?" }],
      walletAddress: wallet,
    }),
  });
  const at: Record<string, number> = {};
  let text = "";
  const decoder = new TextDecoder();
  const reader = response.body?.getReader();
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
    const t = now();
    for (const status of ["quoted", "settled"])
      if (at[status] === undefined && text.includes(`"status":"${status}"`)) at[status] = t;
    if (at.d === undefined && /^d:/m.test(text)) at.d = t;
  }
  // Read once the stream is over: a line may arrive in pieces.
  const d = /^d:(.*)$/m.exec(text)?.[1];
  const finish = d
    ? ((JSON.parse(d) as { finishReason?: string }).finishReason ?? "no finish reason")
    : `HTTP ${response.status}, no d: ${text.slice(0, 300)}`;
  const q = at.quoted ?? Number.NaN;
  const set = at.settled ?? Number.NaN;
  const end = at.d ?? now();
  return {
    ms: end - start,
    ok: finish === "payment-complete",
    ...(finish === "payment-complete" ? {} : { failure: finish }),
    phases: { "to quoted": q - start, "to settled": set - q, "to d:": end - set },
  };
}

/** Runs `job` here (the worker's side): its warm-up, then `warmed()`, then the measured run. */
export async function runJob(job: LoadJob, warmed: () => void = () => {}): Promise<PathResult> {
  let task: (slot: number, i: number) => Promise<Sample>;
  if (job.kind === "bare") {
    const clients = Array.from({ length: job.concurrency }, () => bareClient(job.network, job.payerKey));
    task = (slot) => (clients[slot] as (u: string) => Promise<Sample>)(job.url);
  } else {
    task = (_, i) => chatTurn(job.bases[i % job.bases.length] as string, job.token, job.wallet);
  }
  const warm = job.warmup ?? 0;
  const warmup =
    warm > 0 ? await measureRun(`${job.name} (warm-up)`, { ...job, turns: warm }, task) : undefined;
  warmed();
  const result = await measureRun(job.name, job, task);
  return { ...result, warmedUp: warmup?.samples.filter((s) => s.ok).length ?? 0 };
}

/**
 * Runs `job` in a new worker thread and resolves with its result; `warmed` is called when its
 * warm-up has ended and the measured run starts.
 */
export function runInWorker(job: LoadJob, warmed: () => void = () => {}): Promise<PathResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: job });
    worker.on("message", (message: { warmed: true } | { result: PathResult }) => {
      if ("warmed" in message) warmed();
      else resolve(message.result);
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`load worker exited (code ${code}) without a result`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  void runJob(workerData as LoadJob, () => port.postMessage({ warmed: true })).then((result) => {
    port.postMessage({ result });
  });
}
