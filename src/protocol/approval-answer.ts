import { z } from "zod/v4";
import { PAYMENT_ID } from "./ids.js";

/**
 * The user's wallet's answer to a payment that awaits approval (docs/protocol.md, "Approval"):
 * the EVM signature of the typed data, the Solana transaction as the wallet signed it, or a rejection.
 * Approval comes only from this field, never from message text. Validated and tagged by `kind`:
 * the wire shape a client sends is `ApprovalAnswer` (request-body.ts).
 */
export type ValidatedApproval =
  | { paymentId: string; kind: "signature"; signature: `0x${string}` }
  | { paymentId: string; kind: "transaction"; transaction: string }
  | { paymentId: string; kind: "reject" };

/** The longest wallet signature accepted (an EIP-6492 one carries its wallet's deployment call). */
const MAX_SIGNATURE_BYTES = 4096;

/** The `approval` field (also the approval page's answer, page-answer.ts). */
export const approvalSchema = z
  .strictObject({
    paymentId: z.string().regex(PAYMENT_ID, "must be a payment id from a p: update (pay_<uuid>)"),
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
