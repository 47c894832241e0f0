import { describe, expect, it } from "vitest";
import type { Store } from "../index.js";
import { at, newWallet, payment, T0 } from "./fixtures.js";

/**
 * Text from outside as every backend keeps it (storable.ts): PostgreSQL refuses NUL and an escaped
 * lone surrogate, so a write with either failed there and its record was lost, while the memory
 * store kept it (found by a review). Now each keeps the same: NUL gone, half an emoji as U+FFFD.
 */
export function describeStoredText(store: () => Store): void {
  describe("text from outside", () => {
    const HALF = `${"x".repeat(199)}${"😀".slice(0, 1)}`; // a 200-character cut through an emoji

    it("keeps a service's reason, an offer's extra and a replayed answer, cleaned the same way", async () => {
      const { ledger, idempotency } = store();
      const requirement = { scheme: "exact", extra: { name: "USD\u0000Coin", "k\u0000": HALF } };
      const input = payment({ wallet: newWallet(), requirement });
      expect((await ledger.reserve(input)).ok).toBe(true);
      await ledger.transition(input.paymentId, "signed", {}, at(1));
      await ledger.transition(input.paymentId, "submitted", {}, at(2));
      await ledger.transition(input.paymentId, "unknown", { error: HALF, txHash: "0x\u0000ab" }, at(3));
      const row = await ledger.get(input.paymentId);
      expect(row).toMatchObject({ status: "unknown", error: `${"x".repeat(199)}\uFFFD`, txHash: "0xab" });
      expect(row?.requirement).toEqual({
        scheme: "exact",
        extra: { name: "USDCoin", k: `${"x".repeat(199)}\uFFFD` },
      });

      const key = `text-${input.paymentId}`;
      const claim = {
        key,
        wallet: null,
        fingerprint: "f",
        now: T0,
        owner: "o",
        requestId: "r",
        leaseMs: 10_000,
      };
      await idempotency.claimIdempotencyKey(claim);
      await idempotency.completeIdempotencyKey(key, "o", {
        events: [{ type: "text", text: `a\u0000b${HALF}` }],
      });
      const replay = await idempotency.claimIdempotencyKey({ ...claim, owner: "p", now: at(5) });
      expect(replay).toEqual({
        state: "replay",
        response: { events: [{ type: "text", text: `ab${"x".repeat(199)}\uFFFD` }] },
      });
    });
  });
}
