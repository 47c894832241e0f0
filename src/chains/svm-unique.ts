import { wrapScheme } from "./scheme-wrap.js";
import { solanaMessageHash } from "./svm-landed.js";
import type { SchemeClient } from "./types.js";

/**
 * Two Solana payments must never be one transaction. The SDK's transaction is the offer's transfer,
 * its memo and a recent blockhash: with a seller's fixed `extra.memo` (else the SDK draws a random
 * one), two payments of the same amount to the same payee within one blockhash sign byte-identical
 * transactions. The chain runs one, and both rows would read it as theirs (a black-box run saw two
 * payments settled on one transaction, the ledger counting twice what the wallet paid). So a
 * message signed in this process within a blockhash's life is never signed again: the payment waits
 * for the next blockhash and is built anew. (Across instances it is the ledger's to see; here it is
 * one process.)
 */

/** How long a message is remembered: longer than a blockhash lives (150 slots: 60-90 s on Solana). */
const REMEMBER_MS = 180_000;
/** How long to wait for a new blockhash between two builds, and how many builds at most. */
const NEXT_BLOCKHASH_MS = 120;
const MAX_BUILDS = 40;

const signed = new Map<string, number>();

/** Whether `hash` is new here (and now taken), forgetting what has outlived its blockhash. */
function takeFresh(hash: string, now: number): boolean {
  for (const [seen, at] of signed) {
    if (now - at < REMEMBER_MS) break; // insertion order: the rest are newer
    signed.delete(seen);
  }
  if (signed.has(hash)) return false;
  signed.set(hash, now);
  return true;
}

/** The wire transaction a Solana scheme's payload carries, if any. */
function wireOf(payload: unknown): Uint8Array | undefined {
  const transaction = (payload as { transaction?: unknown } | undefined)?.transaction;
  return typeof transaction === "string" ? new Uint8Array(Buffer.from(transaction, "base64")) : undefined;
}

/** `scheme`, never building the same transaction twice in this process (see above). */
export function uniqueTransactions(scheme: SchemeClient, now: () => number = Date.now): SchemeClient {
  return wrapScheme(scheme, async (inner, version, requirements, context) => {
    for (let build = 1; ; build++) {
      const result = await inner(version, requirements, context);
      const wire = wireOf(result.payload);
      if (!wire || takeFresh(solanaMessageHash(wire), now())) return result;
      if (build >= MAX_BUILDS)
        throw new Error("this exact Solana transaction was just signed for another payment; try again");
      await new Promise((resolve) => setTimeout(resolve, NEXT_BLOCKHASH_MS));
    }
  });
}
