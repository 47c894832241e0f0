/**
 * The operator's kill switch, as payments ask it (docs/deploy.md#operating-it): before a server key
 * signs, and before a payment the user's wallet signed is submitted. Answered from memory (each
 * instance's copy of the pauses, src/operator); a payment already signed is not stopped.
 */
export interface PaymentPause {
  /** `all`: every payment; `key`: the payments of one operator key (the payer's caller). */
  scope: "all" | "key";
  key: string | null;
  /** The operator's words. */
  reason: string;
}

/** How an operator key ended: revoked, expired, or (for a request of its old token) rotated. */
export type KeyEnd = "revoked" | "expired" | "rotated";

export interface PaymentPauses {
  /** The pause that holds for this caller now, if any. */
  pausedFor(caller: string | undefined): PaymentPause | undefined;
  /**
   * Whether the operator key named `caller` has been revoked or has expired since it asked for a
   * payment (undefined for a key in force, or a caller that is no key): such a payment can no
   * longer be approved on the approval page, which has no bearer token to refuse. With the
   * `generation` its request authenticated at (KeyGrant), also whether that token was rotated away.
   */
  keyEnded?(caller: string, generation?: number): KeyEnd | undefined;
}

/** What a stop leaves: nothing signed, or (`signed`: seen once reserved) a signature never sent. */
const leaves = (signed: boolean) =>
  signed ? "The signed payment was not sent; nothing was paid." : "Nothing was signed or paid.";

/** The sentence a paused payment is refused with: the scope and the operator's reason. */
export function pausedMessage(pause: PaymentPause, signed = false): string {
  const scope = pause.scope === "all" ? "all payments" : `payments of the key ${pause.key}`;
  return `The operator paused ${scope}: ${pause.reason}. ${leaves(signed)}`;
}

/**
 * Why nothing more may be signed for this caller now, if so: the operator's pause, or its operator
 * key revoked or expired since its request began (the request's grant was read once, at its start).
 * `signed`: asked once the payment was signed and reserved (its words say it was not sent).
 */
export function stopFor(
  pauses: PaymentPauses | undefined,
  caller: string | undefined,
  generation?: number,
  signed = false,
):
  | { reason: "payments_paused" | "key_ended"; message: string; details: Record<string, unknown> }
  | undefined {
  const pause = pauses?.pausedFor(caller);
  if (pause)
    return {
      reason: "payments_paused",
      message: pausedMessage(pause, signed),
      details: { pause: pause.scope },
    };
  const ended = caller ? pauses?.keyEnded?.(caller, generation) : undefined;
  if (!ended) return undefined;
  const tail = signed ? leaves(true) : "Nothing more is signed; nothing was paid.";
  const message = `The API key of this request was ${ended} while it ran. ${tail}`;
  return { reason: "key_ended", message, details: { key: ended } };
}
