import { z } from "zod/v4";
import { AppError, type ErrorCode, type FieldError } from "../errors/index.js";
import { parseUsd } from "../money/index.js";
import { unsafeContentReason } from "./content.js";
import type { ChatMessage } from "./message.js";
import { parseWallet, type Wallet } from "./wallet.js";

/** Public model names (docs/protocol.md, "Request": `model`). What each resolves to is configuration. */
export const MODEL_ALIASES = ["aimodel-2.0-flash-exp", "aimodel-1.5-pro", "aimodel-1.5-flash"] as const;
export type ModelAlias = (typeof MODEL_ALIASES)[number];

/** Documented bounds of a request (docs/protocol.md). */
export const REQUEST_BOUNDS = {
  maxBodyBytes: 256 * 1024,
  maxMessages: 100,
  maxMessageChars: 16_000,
  maxTotalChars: 64_000,
  maxTokens: 8000,
  maxLimitUsd: "1000000",
  maxListEntries: 20,
} as const;

export const REQUEST_DEFAULTS = {
  model: "aimodel-2.0-flash-exp" as ModelAlias,
  temperature: 0.5,
  maxTokens: 4000,
} as const;

/** Spending limits as the client sent them, parsed to atomic units. Absent fields mean "server default". */
export interface SpendingLimitsInput {
  perTransaction?: bigint;
  perRequest?: bigint;
  daily?: bigint;
  /** Payments above this (atomic USD) ask the user's wallet even when a delegated key could sign. */
  approvalAbove?: bigint;
  allowedNetworks?: string[];
  allowedServices?: string[];
}

/**
 * The user's wallet's answer to a payment that awaits approval (docs/protocol.md, "Approval"):
 * the EVM signature of the typed data, the Solana transaction as the wallet signed it, or a rejection.
 * Approval comes only from this field, never from message text. Validated and tagged by `kind`:
 * the wire shape a client sends is the client SDK's `ApprovalAnswer`.
 */
export type ValidatedApproval =
  | { paymentId: string; kind: "signature"; signature: `0x${string}` }
  | { paymentId: string; kind: "transaction"; transaction: string }
  | { paymentId: string; kind: "reject" };

export type { ChatMessage };

/** A validated chat request. */
export interface ChatRequest {
  messages: ChatMessage[];
  wallet?: Wallet;
  spendingLimits?: SpendingLimitsInput;
  approval?: ValidatedApproval;
  model: ModelAlias;
  temperature: number;
  maxTokens: number;
}

const MAX_LIMIT_ATOMIC = (() => {
  const parsed = parseUsd(REQUEST_BOUNDS.maxLimitUsd);
  if (!parsed.ok) throw new Error("bad REQUEST_BOUNDS.maxLimitUsd");
  return parsed.atomic;
})();

const usdAmount = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const parsed = parseUsd(value);
  if (!parsed.ok) {
    ctx.addIssue({ code: "custom", message: parsed.reason });
    return z.NEVER;
  }
  if (parsed.atomic > MAX_LIMIT_ATOMIC) {
    ctx.addIssue({ code: "custom", message: `must be at most ${REQUEST_BOUNDS.maxLimitUsd} USD` });
    return z.NEVER;
  }
  return parsed.atomic;
});

const caip2 = z
  .string()
  .max(100)
  .regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/, "must be a CAIP-2 network id such as eip155:8453");

const origin = z
  .string()
  .max(2048)
  .transform((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be an http(s) origin such as https://api.example.com" });
      return z.NEVER;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      ctx.addIssue({ code: "custom", message: "must be an http(s) origin" });
      return z.NEVER;
    }
    return url.origin;
  });

const spendingLimitsSchema = z.strictObject({
  perTransaction: usdAmount.optional(),
  perRequest: usdAmount.optional(),
  daily: usdAmount.optional(),
  approvalAbove: usdAmount.optional(),
  allowedNetworks: z.array(caip2).max(REQUEST_BOUNDS.maxListEntries).optional(),
  allowedServices: z.array(origin).max(REQUEST_BOUNDS.maxListEntries).optional(),
});

/** The longest wallet signature accepted (an EIP-6492 one carries its wallet's deployment call). */
const MAX_SIGNATURE_BYTES = 4096;

/** The `approval` field (also the approval page's answer, page-answer.ts). */
export const approvalSchema = z
  .strictObject({
    paymentId: z.string().regex(/^pay_[-0-9a-f]{36}$/, "must be a payment id from a p: update (pay_<uuid>)"),
    // 65 bytes from a plain key; a smart-contract wallet's (EIP-1271, EIP-6492) is longer.
    signature: z
      .string()
      .max(2 + 2 * MAX_SIGNATURE_BYTES, `must be at most ${MAX_SIGNATURE_BYTES} bytes`)
      .regex(/^0x(?:[0-9a-fA-F]{2})+$/, "must be a hex signature (0x + an even number of hex digits)")
      .optional(),
    transaction: z
      .string()
      .max(4096)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be a base64 wire transaction")
      .optional(),
    reject: z.literal(true).optional(),
  })
  .superRefine((a, ctx) => {
    const given = [a.signature, a.transaction, a.reject].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        message: "give exactly one of signature (EVM), transaction (Solana) or reject: true",
      });
    }
  })
  .transform((a): ValidatedApproval => {
    if (a.signature)
      return { paymentId: a.paymentId, kind: "signature", signature: a.signature as `0x${string}` };
    if (a.transaction) return { paymentId: a.paymentId, kind: "transaction", transaction: a.transaction };
    return { paymentId: a.paymentId, kind: "reject" };
  });

const messageSchema = z.strictObject({
  role: z.enum(["user", "assistant", "system"]),
  content: z
    .string()
    .max(REQUEST_BOUNDS.maxMessageChars, `must be at most ${REQUEST_BOUNDS.maxMessageChars} characters`)
    .superRefine((text, ctx) => {
      const reason = unsafeContentReason(text);
      if (reason) ctx.addIssue({ code: "custom", message: reason, params: { unsafe: true } });
    }),
});

const walletAddressSchema = z
  .string()
  .max(100)
  .transform((value, ctx) => {
    const parsed = parseWallet(value);
    if (!parsed.ok) {
      ctx.addIssue({ code: "custom", message: parsed.reason });
      return z.NEVER;
    }
    return parsed.wallet;
  });

const requestSchema = z
  .strictObject({
    messages: z
      .array(messageSchema)
      .min(1, "must hold at least one message")
      .max(REQUEST_BOUNDS.maxMessages, `must hold at most ${REQUEST_BOUNDS.maxMessages} messages`),
    walletAddress: walletAddressSchema.optional(),
    spendingLimits: spendingLimitsSchema.optional(),
    approval: approvalSchema.optional(),
    model: z.enum(MODEL_ALIASES).default(REQUEST_DEFAULTS.model),
    temperature: z.number().min(0).max(1).default(REQUEST_DEFAULTS.temperature),
    maxTokens: z.number().int().min(1).max(REQUEST_BOUNDS.maxTokens).default(REQUEST_DEFAULTS.maxTokens),
  })
  .superRefine((body, ctx) => {
    const last = body.messages.at(-1);
    if (last && last.content.trim() === "") {
      ctx.addIssue({
        code: "custom",
        path: ["messages", body.messages.length - 1, "content"],
        message: "the last message must not be empty",
      });
    }
    // A resumed turn may end with the assistant's words asking for approval.
    if (last && last.role !== "user" && !(body.approval && last.role === "assistant")) {
      ctx.addIssue({
        code: "custom",
        path: ["messages", body.messages.length - 1, "role"],
        message: "the last message must come from the user (or, with approval, the assistant)",
      });
    }
    const total = body.messages.reduce((sum, m) => sum + m.content.length, 0);
    if (total > REQUEST_BOUNDS.maxTotalChars) {
      ctx.addIssue({
        code: "custom",
        path: ["messages"],
        message: `messages must hold at most ${REQUEST_BOUNDS.maxTotalChars} characters in all`,
      });
    }
    if (body.approval !== undefined && body.walletAddress === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["approval"],
        message: "approval needs the walletAddress that signs it",
      });
    }
    if (body.spendingLimits !== undefined && body.walletAddress === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["spendingLimits"],
        message: "spendingLimits needs a walletAddress: limits apply to a wallet",
      });
    }
  });

function codeFor(issue: z.core.$ZodIssue): ErrorCode {
  const head = issue.path[0];
  if (head === "walletAddress") return "invalid_wallet";
  if (head === "spendingLimits") return "invalid_limits";
  if (head === "approval") return "approval_invalid";
  if (issue.code === "custom" && issue.params?.unsafe) return "unsafe_content";
  return "invalid_request";
}

function invalid(error: z.ZodError, what: string): AppError {
  const fields: FieldError[] = error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
  const first = error.issues[0];
  const code = first ? codeFor(first) : "invalid_request";
  const summary = fields
    .map((f) => `${f.path}: ${f.message}`)
    .slice(0, 3)
    .join("; ");
  return new AppError(code, `${what} is invalid: ${summary}`, { fields });
}

/** A wallet and its spending limits given beside a chat request (an MCP session's configuration). */
export interface PayerConfig {
  wallet?: Wallet;
  spendingLimits?: SpendingLimitsInput;
}

const payerConfigSchema = z
  .strictObject({
    walletAddress: walletAddressSchema.optional(),
    spendingLimits: spendingLimitsSchema.optional(),
  })
  .refine((c) => c.spendingLimits === undefined || c.walletAddress !== undefined, {
    path: ["spendingLimits"],
    message: "spendingLimits needs a walletAddress: limits apply to a wallet",
  });

/**
 * Check a wallet address and spending limits with the chat request's own schemas (same bounds,
 * same codes: `invalid_wallet`, `invalid_limits`). Throws AppError (400); `what` names the source.
 */
export function parsePayerConfig(
  input: { walletAddress?: unknown; spendingLimits?: unknown },
  what: string,
): PayerConfig {
  const result = payerConfigSchema.safeParse(input);
  if (!result.success) throw invalid(result.error, what);
  const config: PayerConfig = {};
  if (result.data.walletAddress) config.wallet = result.data.walletAddress;
  if (result.data.spendingLimits) config.spendingLimits = dropUndefined(result.data.spendingLimits);
  return config;
}

/**
 * Validate a parsed JSON body. Throws AppError (400) with a stable code and every field error;
 * the code is that of the first problem (wallet, limits, unsafe content, else invalid_request).
 */
export function parseChatRequest(body: unknown): ChatRequest {
  const result = requestSchema.safeParse(body);
  if (!result.success) throw invalid(result.error, "The request body");
  const { walletAddress, spendingLimits, approval, ...rest } = result.data;
  const request: ChatRequest = { ...rest };
  if (approval) request.approval = approval;
  if (walletAddress) request.wallet = walletAddress;
  if (spendingLimits) request.spendingLimits = dropUndefined(spendingLimits);
  return request;
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
