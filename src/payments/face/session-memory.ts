import type { PayOutput } from "../../tools/contract.js";
import type { PayerSession } from "../face.js";
import type { OfferTerms } from "../run/index.js";

/** What the face remembers of one session object (a chat turn): its quotes, payments and names. */
export interface SessionMemory {
  /** Service names discovery listed, by URL without its query (display only). */
  names: Map<string, string>;
  /**
   * What was quoted for a call: paying it by its target never pays more, maxUsd or not, and pays
   * only the quoted payee, network and asset (another is refused as `price_changed`, as by quote id).
   */
  quoted: Map<string, { amountUsd: string; terms: OfferTerms }>;
  /** Payments by target: the same call twice in one session pays once and answers the same. */
  paid: Map<string, Promise<PayOutput>>;
}

/** One memory per session object, dropped with it. */
export class SessionMemories {
  private readonly memories = new WeakMap<PayerSession, SessionMemory>();

  of(session: PayerSession): SessionMemory {
    let memory = this.memories.get(session);
    if (!memory) {
      memory = { names: new Map(), quoted: new Map(), paid: new Map() };
      this.memories.set(session, memory);
    }
    return memory;
  }
}

/**
 * Keep a payment by its target, so the same call again answers the same. A refusal signed and sent
 * nothing: it is forgotten once known, and the call with corrected input (a higher maxUsd) runs.
 */
export function keepPaid(memory: SessionMemory, key: string, result: Promise<PayOutput>): Promise<PayOutput> {
  memory.paid.set(key, result);
  result.then(
    (output) => {
      if (output.status === "refused" && memory.paid.get(key) === result) memory.paid.delete(key);
    },
    () => undefined, // the caller reads the failure from `result`
  );
  return result;
}
