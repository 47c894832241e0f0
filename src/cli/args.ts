import { parseArgs } from "node:util";
import type { ChatRequestBody, SpendingLimits } from "../client/index.js";
import { MODEL_ALIASES } from "../protocol/models.js";
import { DEVNET_ROLES, devnetIdentity, looksLikeRole, ROLE_LIST } from "./devnet.js";
import { UsageError } from "./errors.js";

export { UsageError } from "./errors.js";
export { USAGE, USAGE_ALL } from "./usage.js";

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
  /** `--devnet user`: `payments` signs in with the devnet's user wallet (it has no token). */
  devnetUser: boolean;
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
  /** `--tab USD`: open a tab of this much at the start (the key file signs once), close it at the end. */
  tab: string | undefined;
}

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

type Values = ReturnType<typeof parse>["values"];

/** Parse the command line (without `node` and the script). Throws {@link UsageError}. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw error instanceof UsageError ? error : parseError(error);
  }
  const { values, positionals } = parsed;
  const { command, helpAll, words } = commandOf(values, positionals);
  const model = values.model;
  if (model !== undefined && !(MODEL_ALIASES as readonly string[]).includes(model))
    throw new UsageError(`--model must be one of ${MODEL_ALIASES.join(", ")}`);
  const limits = spendingLimitsOf(values);
  const { token, wallet, url } = identityOf(values, env);
  const maxTokens = number("max-tokens", values["max-tokens"]);
  if (maxTokens !== undefined && !Number.isInteger(maxTokens))
    throw new UsageError("--max-tokens must be an integer");
  const question = words.join(" ").trim();
  return {
    command,
    helpAll,
    history: historyOf(values),
    question: question === "" ? undefined : question,
    url: url ?? "http://127.0.0.1:3000",
    wallet,
    token: token === "" ? undefined : token,
    keyFile: values["key-file"],
    devnetUser: values.devnet === "user",
    spendingLimits: limits,
    model: model as CliOptions["model"],
    temperature: number("temperature", values.temperature),
    maxTokens,
    json: values.json ?? false,
    sse: values.sse ?? false,
    yes: values.yes ?? false,
    retry: !(values["no-retry"] ?? false),
    tab: tabOf(values.tab, values["key-file"]),
  };
}

/** `--tab USD`: a decimal amount, signed by the key file (the only wallet the terminal can sign with). */
function tabOf(tab: string | undefined, keyFile: string | undefined): string | undefined {
  if (tab === undefined) return undefined;
  if (!/^\d{1,9}(\.\d{1,6})?$/.test(tab) || Number(tab) <= 0)
    throw new UsageError(`--tab ${tab}: a USD amount such as 0.05`);
  if (!keyFile) throw new UsageError("--tab needs --key-file: your wallet signs the tab's funding");
  return tab;
}

/** The command and the words after it (the question); `--help` and `--version` win over both. */
function commandOf(values: Values, positionals: string[]) {
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
  return { command, helpAll, words };
}

/** The limits given, or undefined when none is (the server's apply). */
function spendingLimitsOf(values: Values): SpendingLimits | undefined {
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
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** Who calls which server: the options, then the environment; `--devnet` fills what they leave. */
function identityOf(values: Values, env: NodeJS.ProcessEnv) {
  let token = values.token ?? env.X402_CHAT_TOKEN;
  let wallet = values.wallet ?? env.X402_CHAT_WALLET;
  let url = values.url ?? env.X402_CHAT_URL;
  if (values.devnet !== undefined) {
    const role = values.devnet === "" ? "payer" : values.devnet;
    const identity = devnetIdentity(role, env);
    // The dev token lets the server sign for the payer wallets; the user wallet approves itself.
    if (role !== "user") token = values.token ?? identity.token;
    // A key file names its own wallet (EVM or Solana): the role's EVM wallet is for the rest.
    wallet = values.wallet ?? (values["key-file"] ? undefined : identity.wallet);
    url = values.url ?? identity.url ?? url;
  }
  return { token, wallet, url };
}

/** `payments`: its filters and paging. */
function historyOf(values: Values): CliOptions["history"] {
  return {
    ...(list(values.status) ? { status: list(values.status) } : {}),
    ...(values.since !== undefined ? { since: date("since", values.since) } : {}),
    ...(values.until !== undefined ? { until: date("until", values.until) } : {}),
    ...(values.limit !== undefined ? { limit: rows(values.limit) } : {}),
    ...(values.cursor !== undefined ? { cursor: values.cursor } : {}),
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
      tab: { type: "string" },
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
