import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { type Config, loadConfig } from "../../config/index.js";
import { type KeyView, type PauseTarget, type PauseView, readOperatorToken } from "../../operator/index.js";
import { EXIT } from "../exit.js";
import {
  type AuditBackend,
  auditExport,
  auditVerify,
  directAuditBackend,
  httpAuditBackend,
} from "./audit.js";
import { directTransport } from "./direct.js";
import { httpTransport, OperatorError, type OperatorIo, type OperatorTransport } from "./transport.js";

export type { OperatorIo } from "./transport.js";

/**
 * `x402-chat-agent keys|pause|resume|audit` (docs/deploy.md#operating-it): the operator's commands.
 * They take the service's own configuration (the environment and `.env`: DATABASE_URL, DATA_DIR...)
 * and reach the controls over a running service's operator API when X402_CHAT_URL is set or a
 * local service answers (with OPERATOR_TOKEN, or the token it wrote to `<DATA_DIR>/operator-token`),
 * else straight to the store. Resolves to the exit code.
 */

export const OPERATOR_USAGE = `Usage:
  x402-chat-agent keys create --name NAME [--per-transaction USD] [--per-request USD] [--daily USD]
                              [--wallet ADDRESS,...] [--expires 90m|12h|30d] [--scope chat,mcp,history]
  x402-chat-agent keys list
  x402-chat-agent keys revoke NAME
  x402-chat-agent keys rotate NAME
  x402-chat-agent pause (--all | --key NAME) --reason TEXT
  x402-chat-agent resume (--all | --key NAME)
  x402-chat-agent audit verify
  x402-chat-agent audit export [--since ISO-TIME]

Add --json for JSON output. Over HTTP when X402_CHAT_URL is set (or the local service answers),
with OPERATOR_TOKEN or <DATA_DIR>/operator-token; otherwise straight to the store (DATABASE_URL,
or the embedded store under DATA_DIR, which only one process may open). docs/deploy.md#operating-it
`;

class Usage extends Error {}

const OPTIONS = {
  name: { type: "string" },
  "per-transaction": { type: "string" },
  "per-request": { type: "string" },
  daily: { type: "string" },
  wallet: { type: "string" },
  expires: { type: "string" },
  scope: { type: "string" },
  all: { type: "boolean" },
  key: { type: "string" },
  reason: { type: "string" },
  since: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

function operatorName(): string {
  try {
    // As the operator API takes X-Operator (src/http/operator.ts): a header holds no other
    // character (fetch throws on one outside Latin-1), and the API would drop the whole name.
    return `cli:${userInfo().username}`.replace(/[^\w.@: -]/g, "_").slice(0, 64);
  } catch {
    return "cli";
  }
}

const list = (v: string | undefined) =>
  v
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Whether this service answers at `url` within a second: its liveness probe's own answer (`status`
 * and `openTurns`), not just anything listening there, since the operator token would go to it.
 */
export async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url.replace(/\/+$/, "")}/healthz`, {
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { status?: unknown; openTurns?: unknown } | null;
    return typeof body?.status === "string" && typeof body.openTurns === "number";
  } catch {
    return false;
  }
}

/** Over HTTP when X402_CHAT_URL is set or the local service runs; else straight to the store. */
export async function chooseTransport(env: NodeJS.ProcessEnv, by: string): Promise<OperatorTransport> {
  const config: Config = loadConfig(env);
  const dataDir = config.payments.dataDir;
  const token = env.OPERATOR_TOKEN?.trim() || (await readOperatorToken(dataDir));
  const url = env.X402_CHAT_URL?.trim();
  if (url) {
    if (!token)
      throw new OperatorError(
        `set OPERATOR_TOKEN (the service's), or run where ${dataDir}/operator-token is readable`,
        "usage",
      );
    return httpTransport(url, token, by);
  }
  // A service that wrote its token and still answers: go through it (it may hold the embedded store).
  if (token && (await answers(config.publicUrl))) return httpTransport(config.publicUrl, token, by);
  return directTransport(config, by);
}

/** The audit trail's reads, by the same road as the other commands (chooseTransport). */
async function chooseAuditBackend(
  env: NodeJS.ProcessEnv,
): Promise<AuditBackend & { close(): Promise<void> }> {
  const config: Config = loadConfig(env);
  const token = env.OPERATOR_TOKEN?.trim() || (await readOperatorToken(config.payments.dataDir));
  const url =
    env.X402_CHAT_URL?.trim() || (token && (await answers(config.publicUrl)) ? config.publicUrl : "");
  if (url) {
    if (!token)
      throw new OperatorError("set OPERATOR_TOKEN (the service's) to read its audit trail", "usage");
    return { ...httpAuditBackend({ url, token }), close: async () => {} };
  }
  if (config.payments.dataDir === "memory://" && !config.payments.databaseUrl)
    throw new OperatorError("DATA_DIR=memory:// keeps nothing: set X402_CHAT_URL", "usage");
  return directAuditBackend(config.payments);
}

/** `audit verify` (exit 1 when the chain is broken) and `audit export [--since]` (JSON lines). */
async function audit(sub: string | undefined, values: Values, io: OperatorIo): Promise<number> {
  if (sub !== "verify" && sub !== "export") throw new Usage("audit: verify or export");
  const since = values.since ? new Date(values.since) : new Date(0);
  if (Number.isNaN(since.getTime())) throw new Usage(`audit export: --since ${values.since} is not a time`);
  const backend = await chooseAuditBackend(io.env);
  try {
    return sub === "verify" ? await auditVerify(backend, io) : await auditExport(backend, since, io);
  } finally {
    await backend.close();
  }
}

function usd(v: string | null): string {
  return v === null ? "-" : `$${v}`;
}

function keyLine(k: KeyView): string {
  const wallets = k.wallets ? k.wallets.join(", ") : "any";
  return (
    `${k.name} (${k.status}; scopes ${k.scopes.join(", ")}; wallets ${wallets}; per transaction ` +
    `${usd(k.limits.perTransaction)}, per request ${usd(k.limits.perRequest)}, daily ${usd(k.limits.daily)}; ` +
    `expires ${k.expiresAt ?? "never"})`
  );
}

/** The keys as a table, no secrets (there are none to show). */
export function keysTable(keys: KeyView[]): string {
  if (keys.length === 0) return "No keys.\n";
  const rows = [
    ["NAME", "STATUS", "SCOPES", "WALLETS", "PER TX", "PER REQ", "DAILY", "SPENT 24H", "EXPIRES"],
    ...keys.map((k) => [
      k.name,
      k.status,
      k.scopes.join(","),
      k.wallets ? k.wallets.map((w) => `${w.slice(0, 6)}…${w.slice(-4)}`).join(",") : "any",
      usd(k.limits.perTransaction),
      usd(k.limits.perRequest),
      usd(k.limits.daily),
      `$${k.spentTodayUsd}`,
      k.expiresAt ?? "never",
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map(
      (r) =>
        `${r
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}

function pausesText(pauses: PauseView[]): string {
  if (pauses.length === 0) return "Payments are not paused.\n";
  return pauses
    .map(
      (p) =>
        `Paused: ${p.scope === "all" ? "all payments" : `key ${p.key}`} since ${p.since} by ${p.by}: ${p.reason}\n`,
    )
    .join("");
}

function targetOf(values: Values): PauseTarget {
  if (values.all && !values.key) return { all: true };
  if (values.key && !values.all) return { key: values.key };
  throw new Usage("name the scope: --all or --key NAME");
}

function tokenText(name: string, token: string): string {
  return `Token for ${name} (shown once, it will not be shown again; keep it now):\n${token}\n`;
}

async function keys(
  sub: string | undefined,
  args: string[],
  values: Values,
  t: OperatorTransport,
  out: (s: string) => void,
): Promise<void> {
  const json = (value: unknown) => out(`${JSON.stringify(value, null, 2)}\n`);
  const name = values.name ?? args[0];
  if (sub === "list") {
    const listed = await t.listKeys();
    return values.json ? json({ keys: listed }) : out(keysTable(listed));
  }
  if (!name) throw new Usage(`keys ${sub ?? ""}: name the key`.replace("  ", " "));
  if (sub === "create") {
    const created = await t.createKey({
      name,
      ...(values["per-transaction"] ? { perTransaction: values["per-transaction"] } : {}),
      ...(values["per-request"] ? { perRequest: values["per-request"] } : {}),
      ...(values.daily ? { daily: values.daily } : {}),
      ...(values.wallet ? { wallets: list(values.wallet) } : {}),
      ...(values.expires ? { expiresIn: values.expires } : {}),
      ...(values.scope ? { scopes: list(values.scope) } : {}),
    });
    if (values.json) return json(created);
    return out(`Created key ${keyLine(created.key)}.\n${tokenText(name, created.token)}`);
  }
  if (sub === "revoke") {
    const key = await t.revokeKey(name);
    return values.json ? json({ key }) : out(`Revoked key ${key.name}: its token no longer works.\n`);
  }
  if (sub === "rotate") {
    const rotated = await t.rotateKey(name);
    if (values.json) return json(rotated);
    return out(`Rotated key ${name}: the old token no longer works.\n${tokenText(name, rotated.token)}`);
  }
  throw new Usage(`unknown command: keys ${sub ?? ""}`.trim());
}

async function run(argv: string[], io: OperatorIo, out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, sub, ...args] = positionals;
  if (values.help || !command) {
    out(OPERATOR_USAGE);
    return EXIT.ok;
  }
  if (command === "audit") return audit(sub, values, io);
  if (!["keys", "pause", "resume"].includes(command)) throw new Usage(`unknown command: ${command}`);
  if (command === "pause" && !values.reason?.trim()) throw new Usage("pause: say why with --reason TEXT");
  const target = command === "keys" ? undefined : targetOf(values);
  const transport = await chooseTransport(io.env, operatorName());
  try {
    if (command === "keys") await keys(sub, command === "keys" ? args : [], values, transport, out);
    else if (target && command === "pause")
      out(pausesText(await transport.pause(target, values.reason ?? "")));
    else if (target) out(pausesText(await transport.resume(target)));
  } finally {
    await transport.close();
  }
  return EXIT.ok;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

export async function operatorMain(argv: string[], io: OperatorIo): Promise<number> {
  const out = (s: string) => void io.stdout.write(s);
  // One line, whatever the message holds (parseArgs' span lines; a service's detail): no control
  // character reaches the terminal.
  const err = (s: string) =>
    void io.stderr.write(`x402-chat-agent: ${s.replace(CONTROL_RUNS, " ").trim()}\n`);
  try {
    return await run(argv, io, out);
  } catch (error) {
    if (error instanceof Usage || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      err(`${(error as Error).message} (see --help)`);
      return EXIT.usage;
    }
    if (error instanceof OperatorError) {
      err(`${error.message} (${error.code})`);
      return error.code === "usage" ? EXIT.usage : EXIT.refused;
    }
    if (error instanceof Error && error.name === "ConfigError") {
      err(error.message);
      return EXIT.usage;
    }
    err(error instanceof Error ? error.message : String(error));
    return EXIT.error;
  }
}
