import { z } from "zod/v4";
import { parseUsd } from "../money/index.js";

/** The kinds of value environment variables hold, as zod fields (index.ts's schema is built of them). */

export const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");
/** A whole number in decimal digits (not "0x10", "1e3" or " "), within its bounds. */
export const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]{1,16}$/, "must be a whole number in decimal digits")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
export const url = z.url({ protocol: /^https?$/ }).optional();
export const usd = z.string().transform((value, ctx) => {
  const parsed = parseUsd(value);
  if (!parsed.ok) {
    ctx.addIssue({ code: "custom", message: `a USD amount such as 1.50 (${parsed.reason})` });
    return z.NEVER;
  }
  return parsed.atomic;
});

/**
 * The environment without the variables set to nothing (`PORT=`, or compose's `PORT=${PORT}` with
 * PORT unset): those are unset, so they take their defaults, never 0 or "" (an empty
 * SHUTDOWN_GRACE_MS once read as no grace at all). Whatever reads the environment reads it so.
 */
export function withoutBlanks(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v === undefined || v.trim() !== ""));
}
