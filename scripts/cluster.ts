/**
 * `npm run cluster -- --instances 2`: the multi-instance topology as processes (docs/deploy.md,
 * "Cluster"). One devnet (local chains, facilitator, demo services) runs in this process; N service
 * instances run as their own processes, exactly as the image runs one (`node --import
 * ./src/early-signals.mjs src/start.mjs`), with `PAYMENTS=external` pointed at that devnet, the
 * ledger on the PostgreSQL server of `DATABASE_URL` and the rate limit on the Redis of `REDIS_URL`:
 * what they share is what instances behind a load balancer share. Each listens on its own port
 * (`--port <first>`, then the next ones; default: free ports) and their URLs are printed. The
 * devnet's payer wallets sign with the devnet's dev token, as with `npm start`. Ctrl-C stops all.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Devnet, startDevnet } from "../src/devnet/index.js";
import { operatorTokenFor, operatorTokenPath } from "../src/operator/token-file.js";

const root = fileURLToPath(new URL("..", import.meta.url));

export interface ClusterOptions {
  instances: number;
  /** The environment instances start from (default: this process's); DATABASE_URL is required. */
  env?: Record<string, string | undefined>;
  /** First port (the next instances take the next ones); 0 or absent: free ports. */
  port?: number;
  /** Start the devnet with Solana too (default true; `DEVNET_SOLANA=0` turns it off). */
  solana?: boolean;
  /** Where each instance's output goes (default: this process's stderr, each line prefixed). */
  output?: (instance: number, line: string) => void;
  /** Node options before the script for each instance, given its number (e.g. `--cpu-prof`). */
  nodeArgs?: (instance: number) => string[];
}

export interface Instance {
  url: string;
  pid: number;
}

export interface Cluster {
  devnet: Devnet;
  instances: Instance[];
  /** The bearer token whose requests the devnet's payer wallets sign for. */
  token: string;
  stop(): Promise<void>;
}

/** The service's configuration for the devnet, as `PAYMENTS=external` reads it (docs/devnet.md). */
export function externalEnv(devnet: Devnet, signersFile: string): Record<string, string> {
  const m = devnet.manifest;
  const rpc = [`${m.evm.network}=${m.evm.rpcUrl}`];
  const assets = [`${m.evm.network}=${m.evm.usdc}`];
  if (m.solana) {
    rpc.push(`${m.solana.network}=${m.solana.rpcUrl}`);
    assets.push(`${m.solana.network}=${m.solana.usdcMint}`);
  }
  const origins = [m.facilitatorUrl, ...m.services.map((s) => s.url), ...m.v1Services.map((s) => s.url)];
  return {
    PAYMENTS: "external",
    RPC_URLS: rpc.join(","),
    ASSETS: assets.join(","),
    DISCOVERY_URLS: m.discoveryUrl,
    ALLOW_PRIVATE_ORIGINS: [...new Set(origins.map((u) => new URL(u).origin))].join(","),
    SIGNERS_FILE: signersFile,
  };
}

/** The devnet's payer wallets as server-held keys bound to its dev token (SIGNERS_FILE's format). */
function signersOf(devnet: Devnet): unknown[] {
  const m = devnet.manifest;
  const tokens = [m.devToken];
  const keys: unknown[] = [];
  for (const w of m.evm.wallets.filter((w) => w.role === "payer" || w.role === "payer-low")) {
    const key = devnet.secrets.evm[w.name];
    if (key) keys.push({ chain: "evm", privateKey: key, tokens });
  }
  for (const w of m.solana?.wallets.filter((w) => w.role === "payer" || w.role === "payer-low") ?? []) {
    const key = devnet.secrets.solana[w.name];
    if (key) keys.push({ chain: "solana", secretKey: [...key], tokens });
  }
  return keys;
}

/** Start one instance and resolve with its URL once it listens (or reject with its last words). */
function startInstance(
  index: number,
  env: Record<string, string | undefined>,
  output: (instance: number, line: string) => void,
  nodeArgs: string[] = [],
): Promise<{ url: string; stop: () => Promise<void>; pid: number }> {
  const args = [...nodeArgs, "--import", "./src/early-signals.mjs", "src/start.mjs"];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const tail: string[] = [];
    const lines = (stream: NodeJS.ReadableStream) =>
      createInterface({ input: stream }).on("line", (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        output(index, line);
        const listening = /listening on (http:\/\/\S+)/.exec(line);
        if (listening?.[1] && child.pid) resolve({ url: listening[1], stop, pid: child.pid });
      });
    lines(child.stdout);
    lines(child.stderr);
    void exited.then((code) =>
      reject(new Error(`instance ${index} exited (code ${code}) before listening:\n${tail.join("\n")}`)),
    );
  });
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const base = options.env ?? process.env;
  if (!base.DATABASE_URL)
    throw new Error(
      "DATABASE_URL: instances share one ledger, on a PostgreSQL server (embedded PGlite is one process's)",
    );
  const output = options.output ?? ((i, line) => process.stderr.write(`[${i}] ${line}\n`));
  // Built once here, not by every instance at once.
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: ["ignore", 2, 2] });
  const devnet = await startDevnet({
    manifestPath: null,
    solana: options.solana ?? base.DEVNET_SOLANA !== "0",
  });
  const dir = await mkdtemp(join(tmpdir(), "cluster-"));
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    await Promise.allSettled(stops.map((s) => s()));
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const signers = join(dir, "signers.json");
    await writeFile(signers, JSON.stringify(signersOf(devnet)), { mode: 0o600 });
    // One QUOTE_SECRET for every instance: a quote id (and an MCP requestState) made by one is
    // opened by another (docs/mcp.md). The operator's own wins.
    // One operator token for every instance too: yours when set, else one made here and written
    // where the CLI looks (`<DATA_DIR>/operator-token`). Made by each instance, the last to start
    // would overwrite the others' in the one shared file, and those would refuse it.
    const operatorToken = await operatorTokenFor(base.OPERATOR_TOKEN || undefined, base.DATA_DIR || ".data");
    const env: Record<string, string | undefined> = {
      ...base,
      ...externalEnv(devnet, signers),
      QUOTE_SECRET: base.QUOTE_SECRET || randomBytes(32).toString("hex"),
      OPERATOR_TOKEN: operatorToken,
    };
    delete env.DEVNET_MANIFEST;
    const started = await Promise.allSettled(
      Array.from({ length: options.instances }, (_, i) => {
        const port = options.port ? options.port + i : 0;
        const nodeArgs = options.nodeArgs?.(i + 1);
        return startInstance(i + 1, { ...env, PORT: String(port) }, output, nodeArgs).then((instance) => {
          stops.push(instance.stop);
          return instance;
        });
      }),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const instances = started.flatMap((s) =>
      s.status === "fulfilled" ? [{ url: s.value.url, pid: s.value.pid }] : [],
    );
    return { devnet, instances, token: devnet.manifest.devToken, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function parseArgs(argv: string[]): { instances: number; port?: number } {
  let instances = 2;
  let port: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = Number(argv[i + 1]);
    if (arg === "--instances" && Number.isInteger(value) && value >= 1 && value <= 16) instances = value;
    else if (arg === "--port" && Number.isInteger(value) && value > 0 && value < 65536) port = value;
    else throw new Error(`usage: npm run cluster -- [--instances 1..16] [--port <first port>] (at ${arg})`);
    i++;
  }
  return port ? { instances, port } : { instances };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const cluster = await startCluster({ ...args, env: process.env });
  const m = cluster.devnet.manifest;
  process.stdout.write(
    [
      `cluster of ${cluster.instances.length} instances (ledger ${redact(process.env.DATABASE_URL ?? "")}, rate limit ${process.env.REDIS_URL ? redact(process.env.REDIS_URL) : "per instance (REDIS_URL unset)"})`,
      ...cluster.instances.map(
        (instance, i) => `  instance ${i + 1}  ${instance.url}   (pid ${instance.pid})`,
      ),
      `devnet: discovery ${m.discoveryUrl}, EVM ${m.evm.network} at ${m.evm.rpcUrl}${m.solana ? `, Solana at ${m.solana.rpcUrl}` : ""}`,
      `devnet faults: ${m.controlUrl} (docs/devnet.md)`,
      `dev token ${cluster.token}   (Authorization: Bearer <token> pays from the devnet's payer wallets)`,
      process.env.OPERATOR_TOKEN
        ? "operator token: OPERATOR_TOKEN (every instance)"
        : `operator token in ${operatorTokenPath(process.env.DATA_DIR || ".data")} (every instance)`,
      "Ctrl-C stops them all.",
      "",
    ].join("\n"),
  );
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    void cluster.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

/** A connection URL without its password. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
