import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { ChatRequestBody, SpendingLimits } from "../client/index.js";

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliOptions {
  command: "chat" | "help" | "version" | "payments";
  /** `--help all`: every option and the exit codes (the short usage fits 80x24). */
  helpAll: boolean;
  /** `payments`: filters and paging of the history (GET /api/payments). */
  history: { status?: string[]; since?: Date; until?: Date; limit?: number; cursor?: string };
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

/** The short usage: fits an 80x24 terminal. `--help all` prints {@link USAGE_ALL}. */
export const USAGE = `Usage: x402-chat-agent chat [question] [options]
       x402-chat-agent chat payments [--status LIST] [--since DATE] [--json]

Ask the x402 payment agent: one answer with a question, else interactive
(Ctrl-D or /exit quits, Ctrl-C stops an answer). \`payments\` lists yours.

  --url URL             the service (default $X402_CHAT_URL or 127.0.0.1:3000)
  --token TOKEN         bearer token (default $X402_CHAT_TOKEN)
  --wallet ADDRESS      the wallet that pays (default $X402_CHAT_WALLET)
  --devnet[=ROLE]       the local devnet's service, token and wallet; ROLE is
                        payer (default), payer-low or user
  --key-file PATH       sign approvals here; --yes approves without asking
  --per-transaction USD, --per-request USD, --daily USD, --approval-above USD
                        spending limits (they only tighten the server's)
  --json                raw events (or payments), one JSON object a line
  -h, --help            this help; --help all: every option and exit code

Exit codes: 0 ok, 1 error, 2 usage, 3 refused or unreachable, 4 limit,
5 balance, 6 payment failed, 7 service down, 8 approval pending, 9 outcome
unclear (do not pay again), 130 interrupted.
`;

/** Every option and exit code (`--help all`; docs/clients.md has the same). */
export const USAGE_ALL = `Usage: x402-chat-agent chat [question] [options]
       x402-chat-agent chat payments [options]

Chat with the x402 payment agent. With a question it answers once and exits;
without one it is interactive (Ctrl-D or /exit quits, Ctrl-C stops an answer).
\`payments\` lists the payments of your bearer token, newest first.

Options:
  --url URL            the service (default $X402_CHAT_URL, else
                       http://127.0.0.1:3000; with --devnet, its manifest's)
  --wallet ADDRESS     the wallet that pays (default $X402_CHAT_WALLET, or the
                       key file's)
  --token TOKEN        bearer token (default $X402_CHAT_TOKEN)
  --key-file PATH      sign approvals here: an EVM hex private key, or a
                       solana-keygen JSON array
  --yes                approve with the key file without asking
  --devnet[=ROLE]      the local devnet's manifest ($DEVNET_MANIFEST, else
                       .data/devnet/manifest.json): its service URL, and the
                       wallet of ROLE: payer (default) or payer-low with the
                       dev token, or user (approves itself: use --key-file).
                       \`--devnet ROLE\` also works; a word after --devnet that
                       is close to a role but not one is an error
  --per-transaction USD
  --per-request USD
  --daily USD          spending limits (they only tighten the server's)
  --approval-above USD ask the wallet to approve payments above this
  --networks LIST      allowed networks, CAIP-2, comma-separated
  --services LIST      allowed service origins, comma-separated
  --model NAME         aimodel-2.0-flash-exp, aimodel-1.5-pro, aimodel-1.5-flash
  --temperature N      0 to 1
  --max-tokens N       1 to 8000
  --json               the raw events (or payments), one JSON object a line
  --sse                ask for SSE framing (the same events)
  --no-retry           fail on 429 instead of waiting out Retry-After
  -h, --help           the short help; --help all: this one
  --version            the version

Payments (x402-chat-agent chat payments):
  --status LIST        ledger statuses, comma-separated (settled,failed,...)
  --since DATE         made at or after (2026-11-25 or 2026-11-25T08:00Z)
  --until DATE         made before
  --limit N            rows, 1 to 100 (default 20)
  --cursor CURSOR      the next page (printed when there is one)

Exit codes:
  0 stop or payment-complete     5 insufficient-balance
  1 error                        6 payment-failed
  2 usage                        7 service-unavailable
  3 refused before the stream    8 approval-required (left pending)
    (HTTP error, no connection)  9 payment-unclear: sent, outcome not known
  4 limit-exceeded                 yet; do not pay again
                                 130 interrupted
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
  chatUrl?: string;
  evm: { wallets: Array<{ address: string; role: string }> };
}

/** The devnet wallet roles the terminal can pay from (the server signs for the payer ones). */
export const DEVNET_ROLES = ["payer", "payer-low", "user"] as const;

/** Optimal string alignment distance (an adjacent swap counts one), for telling typos of roles. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  return at(a.length, b.length);
}

/**
 * Whether a word after `--devnet` reads as a mistyped role ("usr", "payr", "pay", "User") rather
 * than the start of a question: one word, close to a role name or a piece of one.
 */
export function looksLikeRole(word: string): boolean {
  const w = word.toLowerCase();
  if (!/^[a-z][a-z_-]{1,15}$/.test(w)) return false;
  return DEVNET_ROLES.some(
    (role) =>
      distance(w, role) <= (role.length <= 4 ? 1 : 2) ||
      (w.length >= 3 && role.startsWith(w)) ||
      (w.length >= 3 && w.startsWith(role)),
  );
}

const ROLE_LIST = DEVNET_ROLES.join(", ");

/** URL, token and wallet of the embedded devnet's manifest (`npm start` writes it). */
export function devnetIdentity(
  role: string,
  env: NodeJS.ProcessEnv,
): { token: string; wallet: string; url: string | undefined } {
  if (!(DEVNET_ROLES as readonly string[]).includes(role))
    throw new UsageError(`--devnet=${role}: not a role; the roles: ${ROLE_LIST}`);
  const path = env.DEVNET_MANIFEST ?? ".data/devnet/manifest.json";
  let manifest: DevnetManifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as DevnetManifest;
  } catch {
    throw new UsageError(`--devnet: cannot read the devnet manifest at ${path} (is the service running?)`);
  }
  const wallets = Array.isArray(manifest?.evm?.wallets) ? manifest.evm.wallets : [];
  const wallet = wallets.find((w) => w.role === role);
  if (!wallet) {
    const roles = [...new Set(wallets.map((w) => w.role))].join(", ") || "none";
    throw new UsageError(`--devnet: the manifest at ${path} has no ${role} wallet (its roles: ${roles})`);
  }
  const url = typeof manifest.chatUrl === "string" ? manifest.chatUrl : undefined;
  return { token: manifest.devToken, wallet: wallet.address, url };
}

/** Node's parseArgs errors, in one plain line (its own quote the option and suggest `--`). */
function parseError(error: unknown): UsageError {
  const e = error as { code?: string; message?: string };
  const option = /'(-{1,2}[^'\s]+)/.exec(e.message ?? "")?.[1];
  if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return new UsageError(`unknown option ${option}`);
  if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option)
    return new UsageError(
      /argument missing/.test(e.message ?? "") ? `${option} needs a value` : `${option} takes no value`,
    );
  return new UsageError(e.message ?? String(error));
}

function date(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value)
    ? new Date(value)
    : undefined;
  if (!parsed || Number.isNaN(parsed.getTime()))
    throw new UsageError(`--${name} must be a date such as 2026-11-25 or 2026-11-25T08:00Z`);
  return parsed;
}

/** Parse the command line (without `node` and the script). Throws {@link UsageError}. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw error instanceof UsageError ? error : parseError(error);
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  let command: CliOptions["command"] = "chat";
  let words = positionals;
  if (first === "chat" || first === "help" || first === "payments") {
    command = first;
    words = rest;
  } else if (first !== undefined) {
    throw new UsageError(`unknown command ${first} (the commands: chat, payments, help)`);
  }
  // `chat payments` alone lists the payments (a question is more than that one word).
  if (command === "chat" && words.length === 1 && words[0] === "payments") {
    command = "payments";
    words = [];
  }
  let helpAll = false;
  if (values.help || command === "help") {
    helpAll = words.length === 1 && words[0] === "all";
    command = "help";
  }
  if (values.version) command = "version";
  if (command === "payments" && words.length > 0)
    throw new UsageError(`payments takes no words (${words.join(" ")}); see --help all`);

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
  let url = values.url ?? env.X402_CHAT_URL;
  if (values.devnet !== undefined) {
    const role = values.devnet === "" ? "payer" : values.devnet;
    const identity = devnetIdentity(role, env);
    // The dev token lets the server sign for the payer wallets; the user wallet approves itself.
    if (role !== "user") token = values.token ?? identity.token;
    wallet = values.wallet ?? identity.wallet;
    url = values.url ?? identity.url ?? url;
  }
  const maxTokens = number("max-tokens", values["max-tokens"]);
  if (maxTokens !== undefined && !Number.isInteger(maxTokens))
    throw new UsageError("--max-tokens must be an integer");
  const question = words.join(" ").trim();
  return {
    command,
    helpAll,
    history: {
      ...(list(values.status) ? { status: list(values.status) } : {}),
      ...(values.since !== undefined ? { since: date("since", values.since) } : {}),
      ...(values.until !== undefined ? { until: date("until", values.until) } : {}),
      ...(values.limit !== undefined ? { limit: rows(values.limit) } : {}),
      ...(values.cursor !== undefined ? { cursor: values.cursor } : {}),
    },
    question: question === "" ? undefined : question,
    url: url ?? "http://127.0.0.1:3000",
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

function rows(value: string): number {
  const n = Number(value);
  if (!/^\d{1,3}$/.test(value) || n < 1 || n > 100) throw new UsageError("--limit must be 1 to 100");
  return n;
}

/**
 * `--devnet` takes an optional role: `--devnet=ROLE` always; `--devnet ROLE` when the next word is
 * a role. A next word that reads as a mistyped role is an error (it would otherwise become the
 * question, and the payer would pay); anything else is the question, and the role the default.
 */
function devnetArgs(argv: string[]): string[] {
  const end = argv.indexOf("--");
  return argv.flatMap((arg, i) => {
    if (arg !== "--devnet" || (end !== -1 && i > end)) return [arg];
    const next = end === i + 1 ? undefined : argv[i + 1];
    if (next !== undefined && (DEVNET_ROLES as readonly string[]).includes(next)) return [arg];
    if (next !== undefined && looksLikeRole(next))
      throw new UsageError(`--devnet ${next}: not a role; the roles: ${ROLE_LIST}`);
    return ["--devnet="];
  });
}

function parse(argv: string[]) {
  const args = devnetArgs(argv);
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
      status: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
}
