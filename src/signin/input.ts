import { z } from "zod/v4";
import { AppError } from "../errors/index.js";
import type { SignInRequest } from "../protocol/index.js";

/**
 * The bodies of `POST /api/auth/wallet/nonce` and `POST /api/auth/wallet`, checked before anything
 * is read or kept: strings of bounded length, no unknown field. The wallet and chain id's full
 * checks are the sign-in's own (sign-in.ts). AppError 400 `invalid_request` names every field.
 */

const text = (max: number) => z.string().min(1).max(max);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

const challengeInput = z.strictObject({ address: text(64), chainId: text(64) });

const signInRequest = z.strictObject({
  domain: text(255),
  uri: text(2048),
  version: z.literal("1"),
  chainId: text(64),
  type: z.enum(["eip191", "ed25519"]),
  nonce: z.string().regex(/^[0-9a-f]{32}$/, "a nonce this service issued"),
  issuedAt: z.string().regex(ISO, "an ISO-8601 instant in UTC"),
  expirationTime: z.string().regex(ISO, "an ISO-8601 instant in UTC"),
  statement: text(512),
  address: text(64),
  // 0x + up to 4096 bytes in hex (a contract wallet's), or 64 bytes in base58.
  signature: text(2 + 2 * 4096),
});

function refused(error: z.ZodError): AppError {
  const fields = error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
  const summary = fields
    .slice(0, 3)
    .map((f) => `${f.path}: ${f.message}`)
    .join("; ");
  return new AppError("invalid_request", `The body is invalid: ${summary}`, { fields });
}

export function parseChallengeInput(body: unknown): { address: string; chainId: string } {
  const result = challengeInput.safeParse(body);
  if (!result.success) throw refused(result.error);
  return result.data;
}

export function parseSignInRequest(body: unknown): SignInRequest {
  const result = signInRequest.safeParse(body);
  if (!result.success) throw refused(result.error);
  return result.data;
}
