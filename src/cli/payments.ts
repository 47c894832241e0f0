import { ChatClient, ChatHttpError, type PaymentHistoryItem } from "../client/index.js";
import { cleanText } from "../protocol/index.js";
import type { CliOptions } from "./args.js";
import { EXIT } from "./exit.js";

/**
 * `x402-chat-agent chat payments`: the bearer token's payments (GET /api/payments), newest first,
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

/** List the payments; resolves to the exit code (3 when the service refuses or cannot be reached). */
export async function listPayments(options: CliOptions, io: Out): Promise<number> {
  const client = new ChatClient({
    baseUrl: options.url,
    ...(options.token ? { token: options.token } : {}),
  });
  try {
    const page = await client.listPayments(options.history);
    if (options.json) {
      for (const item of page.items) io.out(`${JSON.stringify(item)}\n`);
    } else if (page.items.length === 0) {
      io.err(
        options.token
          ? "No payments of this token match.\n"
          : "No payments: they are listed per bearer token (--token, $X402_CHAT_TOKEN or --devnet).\n",
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
    io.err(`✗ cannot reach ${options.url}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.refused;
  }
}
