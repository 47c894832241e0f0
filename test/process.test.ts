import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The real entry point, launched exactly as `npm start` launches it (docs/protocol.md#limits): a SIGTERM at
 * any moment (while modules load, while the devnet starts, with streams open and requests in
 * flight, twice) ends in a graceful stop with exit code 0, every time.
 */
function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } };
  const [command, ...args] = pkg.scripts.start.split(/\s+/);
  // Node itself: a wrapper that relays signals (the tsx CLI) kills a busy child and exits 143.
  expect(command).toBe("node");
  return args;
}

class Proc {
  readonly child: ChildProcess;
  private out = "";
  private waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  readonly exited: Promise<{ code: number | null; signal: string | null }>;

  /** `ownGroup`: a process group of its own, as a terminal gives `npm start` (signalled whole by Ctrl-C). */
  constructor(env: Record<string, string>, ownGroup = false) {
    this.child = spawn(process.execPath, startCommand(), {
      env: { ...process.env, PORT: "0", PAYMENTS: "off", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: ownGroup,
    });
    const take = (chunk: Buffer) => {
      this.out += chunk.toString();
      this.waiters = this.waiters.filter((w) => {
        const match = this.out.match(w.pattern);
        if (match) w.resolve(match);
        return !match;
      });
    };
    this.child.stdout?.on("data", take);
    this.child.stderr?.on("data", take);
    // "close", not "exit": "exit" may come before the last of stdout and stderr is read, and a
    // test that reads the output after exiting would then miss the final lines.
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => resolve({ code, signal }));
    });
  }

  get output(): string {
    return this.out;
  }

  /** Resolves when stdout or stderr shows `pattern` (or rejects if the process ends first). */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    const match = this.out.match(pattern);
    if (match) return Promise.resolve(match);
    return Promise.race([
      new Promise<RegExpMatchArray>((resolve) => this.waiters.push({ pattern, resolve })),
      this.exited.then(({ code, signal }) => {
        throw new Error(`exited (${code ?? signal}) before ${pattern}:\n${this.out.slice(-2000)}`);
      }),
    ]);
  }

  async url(): Promise<string> {
    return (await this.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
  }

  term(): void {
    this.child.kill("SIGTERM");
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An OpenAI-compatible provider that streams a word every 100 ms and never finishes on its own;
 * a conversation whose text includes "hold" finishes (`stop`) when the test calls `release()`.
 */
function endlessModel(): { server: Server; release: () => void } {
  const held = new Set<() => void>();
  const chunk = (delta: Record<string, string>, finish: string | null) => ({
    id: "c1",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (part: Buffer) => {
      body += part.toString();
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const timer = setInterval(() => {
        res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: "word " }, null))}\n\n`);
      }, 100);
      res.on("close", () => clearInterval(timer));
      if (!body.includes("hold")) return;
      const finish = () => {
        clearInterval(timer);
        res.end(`data: ${JSON.stringify(chunk({}, "stop"))}\n\ndata: [DONE]\n\n`);
      };
      held.add(finish);
      res.on("close", () => held.delete(finish));
    });
  });
  const release = () => {
    for (const finish of held) finish();
    held.clear();
  };
  return { server, release };
}

const chat = (url: string, accept: string, content = "hello") =>
  fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body: JSON.stringify({ messages: [{ role: "user", content }] }),
  });

/** Open a chat stream: resolves once its first line is in, with `lines` (all of them, once it ends). */
async function openStream(url: string, content = "hello"): Promise<{ lines: Promise<string[]> }> {
  const res = await chat(url, "text/plain", content);
  const reader = res.body?.getReader();
  if (!reader) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const lines = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text.trimEnd().split("\n");
      text += decoder.decode(value, { stream: true });
    }
  })();
  return { lines };
}

describe("the service process", { timeout: 120_000 }, () => {
  let model: Server;
  let releaseHeld: () => void;
  let modelEnv: Record<string, string>;
  const procs: Proc[] = [];
  const proc = (env: Record<string, string>, ownGroup = false) => {
    const p = new Proc(env, ownGroup);
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    ({ server: model, release: releaseHeld } = endlessModel());
    await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
    const address = model.address();
    if (!address || typeof address === "string") throw new Error("no port");
    modelEnv = {
      MODEL_PROVIDER: "openai-compatible",
      OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${address.port}/v1`,
      MODEL_MAP: "aimodel-2.0-flash-exp=m",
    };
  });
  afterAll(() => {
    for (const p of procs) p.kill();
    model.closeAllConnections();
    model.close();
  });

  it("serves, then stops cleanly on SIGTERM and frees its port", async () => {
    const child = proc({ SHUTDOWN_GRACE_MS: "1000" });
    const url = await child.url();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    const res = await chat(url, "text/plain");
    const text = await res.text();
    expect(text.trimEnd().split("\n").at(-1)).toMatch(/^d:\{"finishReason":"stop"/);
    child.term();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("drains on SIGTERM: new requests get 503 shutting_down, an open stream ends with its own d:", async () => {
    // docs/protocol.md#limits, "Shutdown". The grace period outlasts the test: the stream ends when
    // the model finishes it (releaseHeld), and the process exits as soon as it has.
    const child = proc({ ...modelEnv, SHUTDOWN_GRACE_MS: "120000" });
    const url = await child.url();
    const stream = await openStream(url, "hold");
    child.term();
    await child.waitFor(/"msg":"shutting down"/);

    const refused = await chat(url, "text/plain");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await refused.json()).toMatchObject({ status: 503, code: "shutting_down" });
    for (const path of ["/readyz", "/no-such-page"]) {
      const answer = await fetch(`${url}${path}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 503 });
      expect(await answer.json()).toMatchObject({ code: "shutting_down" });
    }
    expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ status: "draining", openTurns: 1 });

    releaseHeld();
    const lines = await stream.lines;
    expect(lines.filter((line) => line.startsWith("e:"))).toEqual([]);
    expect(lines.at(-1)).toMatch(/^d:\{"finishReason":"stop"/);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    // Every log line carries the process id once (raw text: JSON.parse keeps one of two keys).
    const logLines = child.output.split("\n").filter((line) => line.startsWith("{"));
    expect(logLines.length).toBeGreaterThan(3);
    for (const line of logLines)
      expect({ line, pids: line.match(/"pid":/g)?.length }).toEqual({ line, pids: 1 });
  });

  it("exits 0 on a SIGTERM at several moments of start-up", async () => {
    // Right after the entry point runs, then later while the service loads and starts: four
    // processes at once, each signalled at its own moment.
    const exits = await Promise.all(
      [0, 400, 1500, 3000].map(async (delayMs) => {
        const child = proc({});
        await child.waitFor(/"msg":"starting"/);
        await sleep(delayMs);
        child.term();
        return { delayMs, ...(await child.exited) };
      }),
    );
    for (const exit of exits) expect(exit).toEqual({ delayMs: exit.delayMs, code: 0, signal: null });
  });

  it("exits 0 with streams open and a request in flight, also when signalled twice", async () => {
    const child = proc({ ...modelEnv, SHUTDOWN_GRACE_MS: "500" });
    const url = await child.url();
    const streams = await Promise.all([openStream(url), openStream(url), openStream(url)]);
    const inFlight = chat(url, "application/json");
    // In flight: the service has taken it (a request that came after the signal gets a plain 503).
    while ((await (await fetch(`${url}/healthz`)).json()).openTurns < 4) await sleep(50);
    child.term();
    await sleep(50);
    child.term();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    for (const lines of await Promise.all(streams.map((s) => s.lines))) {
      expect(lines.at(-2)).toMatch(/^e:\{"code":"shutting_down"/);
      expect(lines.at(-1)).toMatch(/^d:\{"finishReason":"error"/);
    }
    const json = await inFlight;
    expect(json.status).toBe(503);
    expect((await json.json()).errors.at(-1).code).toBe("shutting_down");
    expect(child.output).toContain('"msg":"already stopping"');
  });

  // Two processes, each with its own devnet and manifest: run side by side.
  describe.concurrent("with the embedded devnet", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "process-devnet-"));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });
    const devnetEnv = (name: string) => ({
      PAYMENTS: "devnet",
      DATA_DIR: "memory://",
      DEVNET_MANIFEST: join(dir, `${name}.json`),
    });

    it("exits 0 on a SIGTERM while the devnet starts", async () => {
      const child = proc(devnetEnv("starting"));
      await child.waitFor(/"msg":"devnet"/);
      child.term();
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.output).toContain("stop requested while starting");
    });

    it("exits 0 with the devnet running and a stream open, and stops the devnet", async () => {
      // On disk, so that a second process on the same DATA_DIR is refused (docs/deploy.md).
      // (An empty DATABASE_URL is none: the embedded store, whatever the runner's environment.)
      const env = { ...devnetEnv("running"), DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
      const child = proc({ ...env, ...modelEnv, SHUTDOWN_GRACE_MS: "500" });
      const url = await child.url();
      const written = await readFile(join(dir, "running.json"), "utf8");
      const manifest = JSON.parse(written) as { evm: { rpcUrl: string }; chatUrl?: string };
      // Where `npm run chat -- --devnet` connects: the service that runs this devnet.
      expect(manifest.chatUrl).toBe(url);
      // Started again by mistake: refused before its own devnet starts, so the running service's
      // manifest (what `npm run chat -- --devnet` reads) is left as it was.
      const second = proc({ ...env, ...modelEnv });
      expect((await second.exited).code).toBe(1);
      expect(second.output).toContain(`in use by process ${child.child.pid}`);
      expect(second.output).not.toContain('"msg":"devnet"');
      expect(await readFile(join(dir, "running.json"), "utf8")).toBe(written);
      const stream = await openStream(url);
      child.term();
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect((await stream.lines).at(-1)).toMatch(/^d:\{"finishReason":"error"/);
      await expect(fetch(manifest.evm.rpcUrl, { method: "POST" })).rejects.toThrow();
    });
  });

  it("on Ctrl-C (SIGINT to its whole process group) drains with the devnet's chain still up", async () => {
    const dir = await mkdtemp(join(tmpdir(), "process-group-"));
    const manifest = join(dir, "manifest.json");
    const env = { PAYMENTS: "devnet", DATA_DIR: "memory://", DEVNET_MANIFEST: manifest };
    const child = proc({ ...env, ...modelEnv, SHUTDOWN_GRACE_MS: "120000" }, true);
    const url = await child.url();
    const { evm } = JSON.parse(await readFile(manifest, "utf8")) as { evm: { rpcUrl: string } };
    await rm(dir, { recursive: true, force: true });
    const blockNumber = async () => {
      const answer = await fetch(evm.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
      });
      return ((await answer.json()) as { result?: string }).result;
    };
    const stream = await openStream(url, "hold");
    const pid = child.child.pid;
    if (pid === undefined) throw new Error("no pid");
    process.kill(-pid, "SIGINT");
    await child.waitFor(/"msg":"shutting down"/);
    // While the turn drains, a payment in it still reaches the chain: the signal did not end it.
    for (let i = 0; i < 5; i++) {
      expect(await blockNumber()).toMatch(/^0x[0-9a-f]+$/);
      await sleep(100);
    }
    releaseHeld();
    expect((await stream.lines).at(-1)).toMatch(/^d:\{"finishReason":"stop"/);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(evm.rpcUrl, { method: "POST" })).rejects.toThrow();
  });

  it("refuses to start on a bad variable, naming it", async () => {
    const child = proc({ REQUEST_TIMEOUT_MS: "soon" });
    expect((await child.exited).code).toBe(1);
    expect(child.output).toContain("REQUEST_TIMEOUT_MS");
  });
});
