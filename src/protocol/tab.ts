import { z } from "zod/v4";
import { AppError, type FieldError } from "../errors/index.js";
import { parseUsd } from "../money/index.js";
import { tabTokenSchema } from "./tab-token.js";
import type { FundTabBody } from "./tab-types.js";
import type { Wallet, WalletCheck } from "./wallet.js";

export type { FundTabBody, OpenTabBody, TabOpened, TabStatusName, TabView } from "./tab-types.js";

/**
 * Tabs on the wire (docs/protocol.md, "Tabs"; docs/payments.md#tabs): `POST /api/tabs` opens one
 * and answers what the wallet signs, `POST /api/tabs/:tabId/fund` takes the signature,
 * `GET /api/tabs/:tabId` reads it, `POST /api/tabs/:tabId/close` returns what is left. The tab's
 * token (answered once, at opening) goes with each of them and with every chat request paying from it.
 */

export interface OpenTabRequest {
  wallet: Wallet;
  amount: bigint;
  seconds?: number;
  network?: string;
}

const openSchema = z.strictObject({
  walletAddress: z.string().max(200),
  amount: z.union([z.string().max(40), z.number()]),
  // Whole seconds, at least a minute; the longest is the service's TAB_MAX_SECONDS, which the
  // tab's terms refuse past (naming it), not a bound of the wire's.
  seconds: z
    .number({ error: "must be a finite number" })
    .int()
    .min(60)
    .max(Number.MAX_SAFE_INTEGER)
    .optional(),
  network: z.string().min(3).max(100).optional(),
});

const tokenSchema = tabTokenSchema;

const fundSchema = z.union([
  z.strictObject({ token: tokenSchema, signature: z.string().regex(/^0x[0-9a-fA-F]{130,8192}$/) }),
  z.strictObject({ token: tokenSchema, transaction: z.string().min(1).max(8192) }),
]);

function invalid(
  issues: z.core.$ZodIssue[],
  code: "tab_invalid" | "invalid_wallet",
  what: string,
  at = "(body)",
): AppError {
  const fields: FieldError[] = issues.map((issue) => ({
    path: issue.path.map(String).join(".") || at,
    message: issue.message,
  }));
  const summary = fields
    .map((f) => `${f.path}: ${f.message}`)
    .slice(0, 3)
    .join("; ");
  return new AppError(code, `${what} is invalid: ${summary}`, { fields });
}

/** Check `POST /api/tabs`'s body; throws AppError 400 (`tab_invalid`, `invalid_wallet`). */
export function parseOpenTab(body: unknown, checkWallet: WalletCheck): OpenTabRequest {
  const result = openSchema.safeParse(body);
  if (!result.success) throw invalid(result.error.issues, "tab_invalid", "The tab");
  const wallet = checkWallet(result.data.walletAddress);
  if (!wallet.ok) {
    throw new AppError("invalid_wallet", `walletAddress: ${wallet.reason}`, {
      fields: [{ path: "walletAddress", message: wallet.reason }],
    });
  }
  const amount = parseUsd(result.data.amount);
  if (!amount.ok || amount.atomic <= 0n) {
    const message = amount.ok ? "must be more than 0" : amount.reason;
    throw new AppError("tab_invalid", `The tab is invalid: amount: ${message}`, {
      fields: [{ path: "amount", message }],
    });
  }
  return {
    wallet: wallet.wallet,
    amount: amount.atomic,
    ...(result.data.seconds !== undefined ? { seconds: result.data.seconds } : {}),
    ...(result.data.network !== undefined ? { network: result.data.network } : {}),
  };
}

/** The page sends what it sends for a payment: the id it answers and the wallet beside the answer. */
const pageFields = {
  paymentId: z.string().max(40).optional(),
  walletAddress: z.string().max(200).optional(),
};
const pageFundSchema = z.union([
  z.strictObject({ signature: z.string().regex(/^0x[0-9a-fA-F]{130,8192}$/), ...pageFields }),
  z.strictObject({ transaction: z.string().min(1).max(8192), ...pageFields }),
]);

/** Check the approval page's answer to a tab's funding (no token); throws AppError 400 `tab_invalid`. */
export function parsePageFund(body: unknown): { signature: `0x${string}` } | { transaction: string } {
  const result = pageFundSchema.safeParse(body);
  if (!result.success) throw invalid(result.error.issues, "tab_invalid", "The tab's answer");
  return "signature" in result.data
    ? { signature: result.data.signature as `0x${string}` }
    : { transaction: result.data.transaction };
}

/** Check a fund answer; throws AppError 400 `tab_invalid`. */
export function parseFundTab(body: unknown): FundTabBody {
  const result = fundSchema.safeParse(body);
  if (!result.success) throw invalid(result.error.issues, "tab_invalid", "The tab's answer");
  return result.data as FundTabBody;
}

const closeSchema = z.strictObject({ token: tokenSchema });

/** Check a close body: `{ token }` and nothing else, as every body is; throws AppError 400 `tab_invalid`. */
export function parseCloseTab(body: unknown): string {
  const result = closeSchema.safeParse(body);
  if (!result.success) throw invalid(result.error.issues, "tab_invalid", "The tab's close");
  return result.data.token;
}

/** Check the `X-Tab-Token` header; throws AppError 400 `tab_invalid` naming the header. */
export function parseTabToken(token: unknown): string {
  const result = tokenSchema.safeParse(token);
  if (!result.success) throw invalid(result.error.issues, "tab_invalid", "The tab's token", "X-Tab-Token");
  return result.data;
}
