import type { Hono } from "hono";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import {
  type HistoryOwner,
  isPaymentCursor,
  type PaymentListQuery,
  type PaymentsFace,
} from "../payments/index.js";
import {
  LEDGER_STATUSES,
  type LedgerStatus,
  type PaymentHistoryItem,
  WALLET_SESSION_PREFIX,
} from "../protocol/index.js";
import { problemResponse } from "./problem.js";
import { badParam, parseInstant } from "./query-params.js";
import type { AuthVars, Middleware, VarsContext } from "./vars.js";

/**
 * Reading payments back (docs/protocol.md, "Reading a payment"). A turn whose payment ended
 * unclear names it (`payment_unclear`); the client reads its final state here once the chain has
 * been checked. A caller sees its own payments only: the bearer identity of the request that made
 * a payment (kept on its row, the binding approvals use) must be the one asking, and anything
 * else is the same 404 as an id that does not exist, so nothing says whether another's exists.
 */
export interface PaymentRoutesDeps {
  /**
   * The payments face's reads: one of the caller's payments (with the service's answer kept after
   * an approval on the page, 24 h), and the caller's payments a page at a time.
   */
  face: Pick<PaymentsFace, "getPayment" | "listPayments">;
  /** A transaction's public explorer page, or undefined (local networks, unknown ones). */
  explorer?(network: string, transaction: string): string | undefined;
  logger: Logger;
  /** The app's auth middleware (src/http/auth.ts): it puts the caller on `c.var.caller`. */
  auth: Middleware<AuthVars>;
  /**
   * The wallet of a wallet session token (`x4w_...`, src/signin), which reads the payments made
   * from that wallet instead of a caller's; absent: such a token goes to `auth` (which refuses it).
   */
  walletSessions?: (token: string) => Promise<{ wallet: string } | undefined>;
}

/** Who reads: the bearer identity (AuthVars), or a signed-in wallet (`walletReader`, else undefined). */
type ReaderVars = AuthVars & { walletReader: { wallet: string } | undefined };

/**
 * A wallet session's bearer token makes the request its wallet's (the caller stays undefined);
 * any other request goes through the app's auth. An unknown or expired session is 401.
 */
function readerAuth(deps: PaymentRoutesDeps): Middleware<ReaderVars> {
  return async (c, next) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const token = bearer?.startsWith(WALLET_SESSION_PREFIX) ? bearer : undefined;
    c.set("walletReader", undefined);
    if (token === undefined || !deps.walletSessions)
      return deps.auth(c as unknown as Parameters<typeof deps.auth>[0], next);
    const session = await deps.walletSessions(token);
    if (!session)
      throw new AppError("unauthorized", "This wallet sign-in is unknown or has expired; sign in again.");
    c.set("caller", undefined);
    c.set("bearerToken", undefined);
    c.set("grant", undefined);
    c.set("walletReader", { wallet: session.wallet });
    await next();
  };
}

async function getPayment(c: VarsContext<ReaderVars>, deps: PaymentRoutesDeps): Promise<Response> {
  try {
    const { caller, walletReader } = c.var;
    // The face answers only the caller's own payments (an unknown id and another's are the same),
    // or, for a signed-in wallet, those made from it.
    const view = await deps.face.getPayment(walletReader ?? caller, c.req.param("id") ?? "");
    if (!view) throw new AppError("not_found", "No payment of yours has this id.");
    // The page's address and the service's name are the MCP tools' (docs/mcp.md), not this route's.
    const { approvalUrl: _url, serviceName: _name, ...state } = view;
    return c.json(state, 200, { "Cache-Control": "no-store" });
  } catch (error) {
    if (error instanceof AppError) return problemResponse(error);
    deps.logger.warn("payment lookup failed", { err: error });
    return problemResponse(new AppError("store_unavailable", "The payment ledger cannot be read now."));
  }
}

const LIST_PARAMS = new Set(["status", "since", "until", "limit", "cursor", "format"]);
const PAGE = { json: { default: 20, max: 100 }, csv: { default: 1000, max: 1000 } } as const;

function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = parseInstant(value);
  if (!date) throw badParam(name, "an ISO-8601 date or instant (a day the calendar has), years 1 to 9999");
  return date;
}

/** The listing's query, checked: unknown parameters, statuses, instants and bounds are refused. */
function listQuery(url: URL, owner: HistoryOwner): { query: PaymentListQuery; csv: boolean } {
  for (const name of url.searchParams.keys())
    if (!LIST_PARAMS.has(name)) throw badParam(name, "unknown parameter");
  for (const name of LIST_PARAMS)
    if (url.searchParams.getAll(name).length > 1) throw badParam(name, "given more than once");
  const get = (name: string) => url.searchParams.get(name) ?? undefined;
  const format = get("format") ?? "json";
  if (format !== "json" && format !== "csv") throw badParam("format", "json or csv");
  const bounds = PAGE[format];
  const limitText = get("limit");
  const limit = limitText === undefined ? bounds.default : Number(limitText);
  if (!/^\d{1,4}$/.test(limitText ?? "1") || limit < 1 || limit > bounds.max)
    throw badParam("limit", `an integer from 1 to ${bounds.max}`);
  const statuses = get("status")?.split(",");
  const unknown = statuses?.find((st) => !(LEDGER_STATUSES as readonly string[]).includes(st));
  if (unknown !== undefined) throw badParam("status", `one or more of ${LEDGER_STATUSES.join(", ")}`);
  const since = instant("since", get("since"));
  const until = instant("until", get("until"));
  if (since && until && since >= until) throw badParam("until", "later than since");
  const cursor = get("cursor");
  if (cursor !== undefined && !isPaymentCursor(cursor))
    throw badParam("cursor", "not a cursor this service gave");
  const query: PaymentListQuery = {
    ...owner,
    limit,
    ...(statuses ? { statuses: statuses as LedgerStatus[] } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
    ...(format === "csv" ? { forExport: true } : {}),
  };
  return { query, csv: format === "csv" };
}

const CSV_COLUMNS = [
  "createdAt",
  "paymentId",
  "status",
  "amountUsd",
  "amountAtomic",
  "asset",
  "network",
  "payTo",
  "service",
  "transaction",
  "explorerUrl",
  "settledAt",
  "reason",
] as const;

/**
 * One CSV cell. A cell a spreadsheet would read as a formula (starting with = + - @, or a tab or
 * carriage return) gets a leading apostrophe; a cell with a comma, quote or line break is quoted.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function csvRow(item: PaymentHistoryItem): string {
  const cells: Record<(typeof CSV_COLUMNS)[number], string | undefined> = {
    createdAt: item.createdAt,
    paymentId: item.paymentId,
    status: item.status,
    amountUsd: item.amount.usd,
    amountAtomic: item.amount.atomic,
    asset: item.amount.asset,
    network: item.network,
    payTo: item.payTo,
    service: item.service,
    transaction: item.transaction,
    explorerUrl: item.explorerUrl,
    settledAt: item.settledAt,
    reason: item.reason,
  };
  return CSV_COLUMNS.map((c) => csvCell(cells[c] ?? "")).join(",");
}

async function listPayments(c: VarsContext<ReaderVars>, deps: PaymentRoutesDeps): Promise<Response> {
  try {
    const { caller, walletReader } = c.var;
    const url = new URL(c.req.url);
    // Whose payments is the bearer token's to say: a caller's, or a wallet's that signed in. Without
    // one (a wallet address is no proof of anything) nothing is listed, but the query is still checked.
    const { query, csv } = listQuery(url, walletReader ?? { caller: caller ?? "" });
    const anonymous = walletReader === undefined && caller === undefined;
    const { items: page, nextCursor: next } = anonymous
      ? { items: [], nextCursor: undefined }
      : await deps.face.listPayments(query);
    const items: PaymentHistoryItem[] = page.map((item) => {
      const explorerUrl = item.transaction ? deps.explorer?.(item.network, item.transaction) : undefined;
      return { ...item, ...(explorerUrl ? { explorerUrl } : {}) };
    });
    const headers: Record<string, string> = { "Cache-Control": "no-store" };
    if (next) {
      url.searchParams.set("cursor", next);
      headers.Link = `<${url.pathname}${url.search}>; rel="next"`;
    }
    if (!csv) return c.json({ items, ...(next ? { nextCursor: next } : {}) }, 200, headers);
    const body = [CSV_COLUMNS.join(","), ...items.map(csvRow)].join("\r\n");
    return c.body(`${body}\r\n`, 200, {
      ...headers,
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": 'attachment; filename="payments.csv"',
    });
  } catch (error) {
    if (error instanceof AppError) return problemResponse(error);
    deps.logger.warn("payment listing failed", { err: error });
    return problemResponse(new AppError("store_unavailable", "The payment ledger cannot be read now."));
  }
}

/** Mount the payment routes: `GET /api/payments` (the caller's history) and `GET /api/payments/:id`. */
export function mountPaymentRoutes(app: Hono, deps: PaymentRoutesDeps): void {
  const reader = readerAuth(deps);
  app.get("/api/payments", reader, (c) => listPayments(c, deps));
  app.get("/api/payments/:id", reader, (c) => getPayment(c, deps));
}
