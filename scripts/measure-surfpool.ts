/**
 * `npx tsx scripts/measure-surfpool.ts [--seconds 180] [--rate 5] [--sample 15] [--lookups 0]`:
 * the embedded Surfpool node alone (no service, no EVM), fed SOL transfers at a steady rate the
 * way the facilitator settles a payment (latest blockhash, simulate, send, poll the status), with
 * every `--sample` seconds the latency of each RPC method (p50 of the calls made in the interval,
 * plus one probe of the history reads the reconciler uses) and this process's RSS. `--lookups N`
 * adds N `getSignaturesForAddress` calls per transfer (what a reconciler scanning by address adds).
 * Where the time and memory of the Solana devnet go (docs/devnet.md, "How long it lasts").
 */
import { readFileSync } from "node:fs";
import {
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { loadSurfpool, startSolanaNode } from "../src/devnet/solana/node.js";

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  const n = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0`);
  return n;
};
const seconds = arg("seconds", 180);
const rate = arg("rate", 5);
const sampleMs = arg("sample", 15) * 1000;
const lookups = arg("lookups", 0);

const SYSTEM_PROGRAM = address("11111111111111111111111111111111");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = () => {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return m?.[1] ? Number(m[1]) / 1024 : process.memoryUsage().rss / 1048576;
};
const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.ceil(s.length / 2) - 1] as number) : Number.NaN;
};

const loaded = loadSurfpool();
if ("reason" in loaded) throw new Error(loaded.reason);
const node = await startSolanaNode(loaded.Surfnet);
const rpc = createSolanaRpc(node.rpcUrl);
const wallet = node.wallets.find((w) => w.name === "payer") ?? node.wallets[0];
const other = node.wallets.find((w) => w.name === "merchant") ?? node.wallets[1];
if (!wallet || !other) throw new Error("no wallets");
const signer = await createKeyPairSignerFromBytes(wallet.secretKey);
const payee = address(other.address);

let times: Record<string, number[]> = {};
const timed = async <T>(method: string, call: () => Promise<T>): Promise<T> => {
  const start = performance.now();
  try {
    return await call();
  } finally {
    const list = times[method] ?? [];
    list.push(performance.now() - start);
    times[method] = list;
  }
};

let sent = 0;
let failed = 0;
let lastSignature: Signature | undefined;
async function transfer(i: number): Promise<void> {
  const { value: hash } = await timed("getLatestBlockhash", () =>
    rpc.getLatestBlockhash({ commitment: "finalized" }).send(),
  );
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, BigInt(1000 + i), true);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(hash, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: SYSTEM_PROGRAM,
          accounts: [
            { address: signer.address, role: 3, signer },
            { address: payee, role: 1 },
          ],
          data,
        },
        m,
      ),
  );
  const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
  await timed("simulateTransaction", () =>
    rpc.simulateTransaction(wire, { encoding: "base64", sigVerify: false, commitment: "confirmed" }).send(),
  );
  const signature = await timed("sendTransaction", () =>
    rpc.sendTransaction(wire, { encoding: "base64", skipPreflight: true }).send(),
  );
  for (let poll = 0; poll < 120; poll++) {
    const status = await timed("getSignatureStatuses", () => rpc.getSignatureStatuses([signature]).send());
    const s = status.value[0]?.confirmationStatus;
    if (s === "confirmed" || s === "finalized") break;
    await sleep(250);
  }
  for (let k = 0; k < lookups; k++) {
    await timed("getSignaturesForAddress", () =>
      rpc.getSignaturesForAddress(signer.address, { limit: 1000 }).send(),
    );
  }
  lastSignature = signature;
}

async function probe(): Promise<void> {
  await timed("probe getSignaturesForAddress(1)", () =>
    rpc.getSignaturesForAddress(signer.address, { limit: 1 }).send(),
  );
  const sig = lastSignature;
  if (sig) {
    await timed("probe getSignatureStatuses(history)", () =>
      rpc.getSignatureStatuses([sig], { searchTransactionHistory: true }).send(),
    );
    await timed("probe getTransaction", () =>
      rpc.getTransaction(sig, { encoding: "base64", maxSupportedTransactionVersion: 0 }).send(),
    );
  }
  await timed("probe getSlot", () => rpc.getSlot().send());
}

const t0 = Date.now();
const header = [
  "t s",
  "sent",
  "failed",
  "RSS MB",
  ...[
    "getLatestBlockhash",
    "simulateTransaction",
    "sendTransaction",
    "getSignatureStatuses",
    ...(lookups ? ["getSignaturesForAddress"] : []),
    "probe getSignaturesForAddress(1)",
    "probe getSignatureStatuses(history)",
    "probe getTransaction",
    "probe getSlot",
  ].map((m) => `${m} p50 ms`),
];
console.log(`| ${header.join(" | ")} |`);
const methods = header.slice(4).map((h) => h.replace(/ p50 ms$/, ""));
const sampler = setInterval(async () => {
  await probe().catch(() => {});
  const t = times;
  times = {};
  const row = [
    String(Math.round((Date.now() - t0) / 1000)),
    String(sent),
    String(failed),
    rssMb().toFixed(0),
    ...methods.map((m) => p50(t[m] ?? []).toFixed(1)),
  ];
  console.log(`| ${row.join(" | ")} |`);
}, sampleMs);

const inFlight: Promise<void>[] = [];
for (let i = 0; Date.now() - t0 < seconds * 1000; i++) {
  const wait = t0 + (i * 1000) / rate - Date.now();
  if (wait > 0) await sleep(wait);
  inFlight.push(
    transfer(i).then(
      () => {
        sent++;
      },
      () => {
        failed++;
      },
    ),
  );
  if (inFlight.length > 500) inFlight.splice(0, 400);
}
await Promise.allSettled(inFlight);
clearInterval(sampler);
await node.stop();
process.exit(0);
