import { AppError, type FieldError } from "../errors/index.js";
import { approvalSchema, type ValidatedApproval } from "./approval-answer.js";
import type { Wallet, WalletCheck } from "./wallet.js";

/**
 * The approval page's answer (POST /api/approvals/:paymentId, docs/protocol.md "The approval
 * page"): the chat's `approval` shape with its payment id from the path, optionally the
 * `walletAddress` the page signed with, and, with `reject: true`, the wallet's `signature` of the
 * decline message. Throws AppError 400 `approval_invalid` (or `invalid_wallet`) naming every field.
 * `checkWallet` is the service's full address check (src/chains `parseWallet`).
 */
export function parsePageApproval(
  paymentId: string,
  body: unknown,
  checkWallet: WalletCheck,
): { answer: ValidatedApproval; wallet?: Wallet; declineSignature?: `0x${string}` } {
  const fields = (body !== null && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const { walletAddress, ...rest } = fields;
  // A decline carries the wallet's signature of the decline message beside `reject: true`.
  const declining = rest.reject === true && rest.signature !== undefined;
  const { signature, ...unsigned } = rest;
  const result = approvalSchema.safeParse({ ...(declining ? unsigned : rest), paymentId });
  const signed = declining ? approvalSchema.safeParse({ paymentId, signature }) : undefined;
  const wallet = typeof walletAddress === "string" ? checkWallet(walletAddress) : undefined;
  if (walletAddress !== undefined && !wallet?.ok) {
    throw new AppError("invalid_wallet", "walletAddress is not a wallet address.", {
      fields: [{ path: "walletAddress", message: wallet && !wallet.ok ? wallet.reason : "must be a string" }],
    });
  }
  const issues = [...(result.error?.issues ?? []), ...(signed?.error?.issues ?? [])];
  if (!result.success || issues.length > 0) {
    const errors: FieldError[] = issues.map((issue) => ({
      path: issue.path.map(String).join(".") || "(body)",
      message: issue.message,
    }));
    const summary = errors
      .map((f) => `${f.path}: ${f.message}`)
      .slice(0, 3)
      .join("; ");
    throw new AppError("approval_invalid", `The answer is invalid: ${summary}`, { fields: errors });
  }
  const declineSignature =
    signed?.success && signed.data.kind === "signature" ? signed.data.signature : undefined;
  return {
    answer: result.data,
    ...(wallet?.ok ? { wallet: wallet.wallet } : {}),
    ...(declineSignature ? { declineSignature } : {}),
  };
}
