import { ChatClient, ChatHttpError, type PaymentHistoryItem } from "../client/index.js";
import { cleanText } from "../protocol/index.js";
import type { CliOptions } from "./args.js";
import { EXIT } from "./exit.js";
import type { LocalKey } from "./keys.js";
import { UNREACHABLE_HINT } from "./session.js";
import { signInWallet } from "./sign-in.js";

/**
 * `x402-chat-agent chat payments`: the bearer token's payments (GET /api/payments), or without a
 * token those of the key file's wallet (or `--devnet user`'s) once it signed in, newest first,
 * as a table that fits 80 columns, or one JSON object a line with `--json`. Every cell comes from
 * the service: control characters are dropped before it reaches the terminal.
 */

interface Out {
  out(text: string): void;
  err(text: string): void;
}

/** Text from the service, safe to print: no escapes, controls or bidi overrides. */
function plain(text: string): string {
  return cleanText(text).text.replace(/[\t\r\n]+/g, " ");
}

function cut(text: string, width: number): string {
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`;
}

/** "api.example.com/weather": the service's host and path. */
function serviceOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return url;
  }
}

function short(value: string | undefined): string {
  if (!value) return "-";
  return value.length <= 11 ? value : `${value.slice(0, 6)}…${value.slice(-4)}`;
}

/** One table row: when (UTC), status, amount, service (its name when known), network, transaction. */
export function paymentRow(item: PaymentHistoryItem): string {
  const when = plain(item.createdAt).replace("T", " ").slice(0, 16);
  return [
    cut(when, 16),
    cut(plain(item.status), 12),
    `$${plain(item.amount.usd)}`.padStart(8),
    cut(plain(item.serviceName ?? serviceOf(item.service)), 13),
    cut(plain(item.network), 13),
    plain(short(item.transaction)),
  ].join(" ");
}

/** The table fits 80 columns: 16 + 12 + 8 + 13 + 13 + 11, and the spaces between. */
const HEADER = `${"WHEN (UTC)".padEnd(16)} ${"STATUS".padEnd(12)} ${"AMOUNT".padStart(8)} ${"SERVICE".padEnd(13)} ${"NETWORK".padEnd(13)} TX`;

/** Whose payments are listed: the token's, or a wallet's once it signed in (sign-in.ts). */
async function readerToken(
  options: CliOptions,
  key: LocalKey | undefined,
  io: Out,
): Promise<{ token?: string; wallet?: string }> {
  if (options.token) return { token: options.token };
  const wallet = await signInWallet(options, key);
  if (!wallet) return {};
  const session = await new ChatClient({ baseUrl: options.url }).signIn(wallet);
  io.err(`Signed in as ${plain(session.wallet)}: the payments made from this wallet.\n`);
  return { token: session.token, wallet: session.wallet };
}

/** List the payments; resolves to the exit code (3 when the service refuses or cannot be reached). */
export async function listPayments(options: CliOptions, io: Out, key?: LocalKey): Promise<number> {
  try {
    const reader = await readerToken(options, key, io);
    const client = new ChatClient({ baseUrl: options.url, ...(reader.token ? { token: reader.token } : {}) });
    const page = await client.listPayments(options.history);
    if (options.json) {
      for (const item of page.items) io.out(`${JSON.stringify(item)}\n`);
    } else if (page.items.length === 0) {
      io.err(
        reader.wallet
          ? "No payments from this wallet match.\n"
          : reader.token
            ? "No payments of this token match.\n"
            : "No payments: they are listed per bearer token (--token, $X402_CHAT_TOKEN or --devnet), or per wallet (--key-file).\n",
      );
    } else {
      io.out(`${HEADER}\n${page.items.map(paymentRow).join("\n")}\n`);
      for (const item of page.items)
        if (item.explorerUrl) io.err(`${short(item.transaction)} ${plain(item.explorerUrl)}\n`);
    }
    if (page.nextCursor) io.err(`More: add --cursor ${plain(page.nextCursor)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ChatHttpError) {
      io.err(`✗ HTTP ${error.status} ${error.code}: ${plain(error.problem.detail ?? error.problem.title)}\n`);
      return EXIT.refused;
    }
    // fetch fails with a TypeError; anything else says itself (a sign-in message not signed...).
    const text = error instanceof Error ? error.message : String(error);
    io.err(
      error instanceof TypeError
        ? `✗ cannot reach ${options.url}: ${text}\n${UNREACHABLE_HINT}\n`
        : `✗ ${plain(text)}\n`,
    );
    return EXIT.refused;
  }
}
