import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { ChatRequestBody, SpendingLimits } from "../client/index.js";

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliOptions {
  command: "chat" | "help" | "version";
  /** One-shot: the question; interactive when absent. */
  question: string | undefined;
  url: string;
  wallet: string | undefined;
  token: string | undefined;
  keyFile: string | undefined;
  spendingLimits: SpendingLimits | undefined;
  model: ChatRequestBody["model"] | undefined;
  temperature: number | undefined;
  maxTokens: number | undefined;
  json: boolean;
  sse: boolean;
  /** Approve with the key file without asking. */
  yes: boolean;
  /** Wait out 429s (default) or fail at once. */
  retry: boolean;
}

export const USAGE = `Usage: x402-chat-agent chat [question] [options]

Chat with the x402 payment agent. With a question it answers once and exits;
without one it is interactive (Ctrl-D or /exit to quit, Ctrl-C stops an answer).

Options:
  --url URL              the service (default $X402_CHAT_URL or http://127.0.0.1:3000)
  --wallet ADDRESS       the wallet that pays (default $X402_CHAT_WALLET, or the key file's)
  --token TOKEN          bearer token (default $X402_CHAT_TOKEN)
  --key-file PATH        sign approvals locally: EVM hex private key, or a solana-keygen JSON array
  --yes                  approve with the key file without asking
  --devnet [ROLE]        a wallet of the local devnet's manifest: payer (the default, with the
                         dev token) or user (approves in its own wallet: use --key-file); the
                         manifest at $DEVNET_MANIFEST or .data/devnet/manifest.json
  --per-transaction USD  spending limits of this chat (they only tighten the server's)
  --per-request USD
  --daily USD
  --approval-above USD   ask the wallet to approve payments above this
  --networks LIST        allowed networks, CAIP-2, comma-separated (eip155:8453,...)
  --services LIST        allowed service origins, comma-separated
  --model NAME           aimodel-2.0-flash-exp, aimodel-1.5-pro or aimodel-1.5-flash
  --temperature N        0 to 1
  --max-tokens N         1 to 8000
  --json                 print the raw events, one JSON object a line
  --sse                  ask for SSE framing (the same events)
  --no-retry             fail on 429 instead of waiting out Retry-After
  -h, --help             this help
  --version              the version

Exit codes: 0 stop or payment-complete, 1 error, 2 usage, 3 refused before the stream (HTTP
error or no connection), 4 limit-exceeded, 5 insufficient-balance, 6 payment-failed,
7 service-unavailable, 8 approval-required (left pending), 9 payment-unclear (sent, outcome
not known yet: do not pay again), 130 interrupted.
`;

const MODELS = ["aimodel-2.0-flash-exp", "aimodel-1.5-pro", "aimodel-1.5-flash"] as const;

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number`);
  return n;
}

function usd(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+(\.[0-9]{1,6})?$/.test(value)) throw new UsageError(`--${name} must be USD such as 0.50`);
  return value;
}

interface DevnetManifest {
  devToken: string;
  evm: { wallets: Array<{ address: string; role: string }> };
}

/** Token and wallet of the embedded devnet's manifest (`npm start` writes it). */
export function devnetIdentity(role: string, env: NodeJS.ProcessEnv): { token: string; wallet: string } {
  const path = env.DEVNET_MANIFEST ?? ".data/devnet/manifest.json";
  let manifest: DevnetManifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as DevnetManifest;
  } catch {
    throw new UsageError(`--devnet: cannot read the devnet manifest at ${path} (is the service running?)`);
  }
  const wallet = manifest.evm.wallets.find((w) => w.role === role);
  if (!wallet) throw new UsageError(`--devnet: no EVM wallet with role ${role} in ${path}`);
  return { token: manifest.devToken, wallet: wallet.address };
}

/** Parse the command line (without `node` and the script). Throws {@link UsageError}. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  let command: CliOptions["command"] = "chat";
  let words = positionals;
  if (first === "chat" || first === "help") {
    command = first;
    words = rest;
  } else if (first !== undefined) {
    throw new UsageError(`unknown command ${JSON.stringify(first)} (try: chat)`);
  }
  if (values.help) command = "help";
  if (values.version) command = "version";

  const model = values.model;
  if (model !== undefined && !(MODELS as readonly string[]).includes(model))
    throw new UsageError(`--model must be one of ${MODELS.join(", ")}`);
  const limits: SpendingLimits = {};
  const set = <K extends keyof SpendingLimits>(key: K, value: SpendingLimits[K] | undefined) => {
    if (value !== undefined) limits[key] = value;
  };
  set("perTransaction", usd("per-transaction", values["per-transaction"]));
  set("perRequest", usd("per-request", values["per-request"]));
  set("daily", usd("daily", values.daily));
  set("approvalAbove", usd("approval-above", values["approval-above"]));
  set("allowedNetworks", list(values.networks));
  set("allowedServices", list(values.services));

  let token = values.token ?? env.X402_CHAT_TOKEN;
  let wallet = values.wallet ?? env.X402_CHAT_WALLET;
  if (values.devnet !== undefined) {
    const role = values.devnet === "" ? "payer" : values.devnet;
    const identity = devnetIdentity(role, env);
    // The dev token lets the server sign for the payer wallets; the user wallet approves itself.
    if (role !== "user") token = values.token ?? identity.token;
    wallet = values.wallet ?? identity.wallet;
  }
  const maxTokens = number("max-tokens", values["max-tokens"]);
  if (maxTokens !== undefined && !Number.isInteger(maxTokens))
    throw new UsageError("--max-tokens must be an integer");
  const question = words.join(" ").trim();
  return {
    command,
    question: question === "" ? undefined : question,
    url: values.url ?? env.X402_CHAT_URL ?? "http://127.0.0.1:3000",
    wallet,
    token: token === "" ? undefined : token,
    keyFile: values["key-file"],
    spendingLimits: Object.keys(limits).length > 0 ? limits : undefined,
    model: model as CliOptions["model"],
    temperature: number("temperature", values.temperature),
    maxTokens,
    json: values.json ?? false,
    sse: values.sse ?? false,
    yes: values.yes ?? false,
    retry: !(values["no-retry"] ?? false),
  };
}

function parse(argv: string[]) {
  // `--devnet` takes an optional role: a bare `--devnet` before the question must not eat it.
  const args = argv.flatMap((arg, i) =>
    arg === "--devnet" && (argv[i + 1] === undefined || !["payer", "user"].includes(argv[i + 1] ?? ""))
      ? ["--devnet="]
      : [arg],
  );
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: "string" },
      wallet: { type: "string" },
      token: { type: "string" },
      "key-file": { type: "string" },
      yes: { type: "boolean", short: "y" },
      devnet: { type: "string" },
      "per-transaction": { type: "string" },
      "per-request": { type: "string" },
      daily: { type: "string" },
      "approval-above": { type: "string" },
      networks: { type: "string" },
      services: { type: "string" },
      model: { type: "string" },
      temperature: { type: "string" },
      "max-tokens": { type: "string" },
      json: { type: "boolean" },
      sse: { type: "boolean" },
      "no-retry": { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
}
