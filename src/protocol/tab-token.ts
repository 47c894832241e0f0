import { z } from "zod/v4";

/** A tab's token as `POST /api/tabs` hands it out (src/payments/tabs): `x4t_` and 32 bytes, base64url. */
export const TAB_TOKEN_PATTERN = /^x4t_[A-Za-z0-9_-]{43}$/;

export const tabTokenSchema = z.string().regex(TAB_TOKEN_PATTERN, "must be a tab's token (x4t_...)");
