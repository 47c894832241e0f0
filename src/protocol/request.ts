import { z } from "zod/v4";
import { AppError, type ErrorCode, type FieldError } from "../errors/index.js";
import { parseUsd } from "../money/index.js";
import { approvalSchema, type ValidatedApproval } from "./approval-answer.js";
import { unsafeContentReason } from "./content.js";
import type { ChatMessage } from "./message.js";
import { DEFAULT_MODEL, MODEL_ALIASES, type ModelAlias } from "./models.js";
import { CAIP2_NETWORK } from "./networks.js";
import type { ChatRequestBody } from "./request-body.js";
import type { Exactly, Same } from "./schema-type.js";
import { tabTokenSchema } from "./tab-token.js";
import type { Wallet, WalletCheck } from "./wallet.js";

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
  model: DEFAULT_MODEL,
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

export type { ChatMessage };

/** A validated chat request. */
export interface ChatRequest {
  messages: ChatMessage[];
  wallet?: Wallet;
  spendingLimits?: SpendingLimitsInput;
  approval?: ValidatedApproval;
  /** A tab's token: the tab pays what the wallet would otherwise sign (docs/payments.md#tabs). */
  tab?: string;
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

const caip2 = z.string().max(100).regex(CAIP2_NETWORK, "must be a CAIP-2 network id such as eip155:8453");

/**
 * An allow-list entry: an http(s) origin only. A path, query or credentials would read narrower
 * than what it allows (the whole origin), so they are refused rather than dropped.
 */
const origin = z
  .string()
  .max(2048)
  .transform((value, ctx) => {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    const plain = url && !url.username && !url.password && url.pathname === "/" && !url.search && !url.hash;
    if (url && plain && (url.protocol === "http:" || url.protocol === "https:")) return url.origin;
    const message =
      "must be an http(s) origin only, such as https://api.example.com (no path, query or credentials)";
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  });

const spendingLimitsSchema = z.strictObject({
  perTransaction: usdAmount.optional(),
  perRequest: usdAmount.optional(),
  daily: usdAmount.optional(),
  approvalAbove: usdAmount.optional(),
  allowedNetworks: z.array(caip2).max(REQUEST_BOUNDS.maxListEntries).optional(),
  allowedServices: z.array(origin).max(REQUEST_BOUNDS.maxListEntries).optional(),
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

/** A wallet address, checked by the check the service gives (src/chains `parseWallet`). */
function walletAddressSchema(checkWallet: WalletCheck) {
  return z
    .string()
    .max(100)
    .transform((value, ctx) => {
      const parsed = checkWallet(value);
      if (!parsed.ok) {
        ctx.addIssue({ code: "custom", message: parsed.reason });
        return z.NEVER;
      }
      return parsed.wallet;
    });
}

// Counted before each message is read: a refusal costs no more than the bound's worth of work.
const TOO_MANY_MESSAGES = `must hold at most ${REQUEST_BOUNDS.maxMessages} messages`;
function requestSchema(checkWallet: WalletCheck) {
  const finite = z.number({ error: "must be a finite number" }); // 1e400 parses as Infinity
  return z
    .strictObject({
      messages: z
        .array(z.unknown())
        .min(1, { error: "must hold at least one message", abort: true })
        .max(REQUEST_BOUNDS.maxMessages, { error: TOO_MANY_MESSAGES, abort: true })
        .pipe(z.array(messageSchema)),
      walletAddress: walletAddressSchema(checkWallet).optional(),
      spendingLimits: spendingLimitsSchema.optional(),
      approval: approvalSchema.optional(),
      tab: tabTokenSchema.optional(),
      model: z.enum(MODEL_ALIASES).default(REQUEST_DEFAULTS.model),
      temperature: finite.min(0).max(1).default(REQUEST_DEFAULTS.temperature),
      maxTokens: finite.int().min(1).max(REQUEST_BOUNDS.maxTokens).default(REQUEST_DEFAULTS.maxTokens),
    })
    .superRefine(checkConversation);
}

type RequestFields = {
  messages: ChatMessage[];
  walletAddress?: unknown;
  spendingLimits?: unknown;
  approval?: unknown;
  tab?: unknown;
};

const NEEDS_WALLET = {
  approval: "approval needs the walletAddress that signs it",
  spendingLimits: "spendingLimits needs a walletAddress: limits apply to a wallet",
  tab: "tab needs the walletAddress that funded it",
} as const;

/** The rules across fields: the last message, the total length, what needs a walletAddress. */
function checkConversation(body: RequestFields, ctx: z.RefinementCtx): void {
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
  // What needs a wallet: an approval signs for it, limits apply to it, a tab was funded by it.
  for (const [field, message] of Object.entries(NEEDS_WALLET)) {
    if (body[field as keyof typeof NEEDS_WALLET] !== undefined && body.walletAddress === undefined)
      ctx.addIssue({ code: "custom", path: [field], message });
  }
}

function codeFor(issue: z.core.$ZodIssue): ErrorCode {
  const head = issue.path[0];
  if (head === "walletAddress") return "invalid_wallet";
  if (head === "spendingLimits") return "invalid_limits";
  if (head === "approval") return "approval_invalid";
  if (head === "tab") return "tab_invalid";
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
  /** A tab's token (the chat request's `tab`). */
  tab?: string;
}

function payerConfigSchema(checkWallet: WalletCheck) {
  return z
    .strictObject({
      walletAddress: walletAddressSchema(checkWallet).optional(),
      spendingLimits: spendingLimitsSchema.optional(),
    })
    .refine((c) => c.spendingLimits === undefined || c.walletAddress !== undefined, {
      path: ["spendingLimits"],
      message: "spendingLimits needs a walletAddress: limits apply to a wallet",
    });
}

/** The schemas that hold a wallet check, built once for each check given. */
const built = new WeakMap<
  WalletCheck,
  { request: ReturnType<typeof requestSchema>; payer: ReturnType<typeof payerConfigSchema> }
>();

function schemasFor(checkWallet: WalletCheck) {
  let schemas = built.get(checkWallet);
  if (!schemas) {
    schemas = { request: requestSchema(checkWallet), payer: payerConfigSchema(checkWallet) };
    built.set(checkWallet, schemas);
  }
  return schemas;
}

/** Every body a client may send is one the schema takes, field for field (the build fails otherwise). */
type _BodyIsTheSchemasInput = [
  Exactly<Same<keyof ChatRequestBody, keyof z.input<ReturnType<typeof requestSchema>>>>,
  Exactly<ChatRequestBody extends z.input<ReturnType<typeof requestSchema>> ? true : false>,
];

/**
 * Check a wallet address and spending limits with the chat request's own schemas (same bounds,
 * same codes: `invalid_wallet`, `invalid_limits`). Throws AppError (400); `what` names the source.
 * `checkWallet` is the service's full address check (src/chains `parseWallet`).
 */
export function parsePayerConfig(
  input: { walletAddress?: unknown; spendingLimits?: unknown },
  what: string,
  checkWallet: WalletCheck,
): PayerConfig {
  const result = schemasFor(checkWallet).payer.safeParse(input);
  if (!result.success) throw invalid(result.error, what);
  const config: PayerConfig = {};
  if (result.data.walletAddress) config.wallet = result.data.walletAddress;
  if (result.data.spendingLimits) config.spendingLimits = dropUndefined(result.data.spendingLimits);
  return config;
}

/**
 * Validate a parsed JSON body. Throws AppError (400) with a stable code and every field error;
 * the code is that of the first problem (wallet, limits, unsafe content, else invalid_request).
 * `checkWallet` is the service's full address check (src/chains `parseWallet`).
 */
export function parseChatRequest(body: unknown, checkWallet: WalletCheck): ChatRequest {
  const result = schemasFor(checkWallet).request.safeParse(body);
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
