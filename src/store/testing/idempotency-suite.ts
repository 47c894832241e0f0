import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Store } from "../index.js";
import { at, HOUR, T0 } from "./fixtures.js";

/**
 * The HTTP layer's idempotency store (src/http/idempotency.ts), written once and run inside the
 * ledger suite against every backend, on the same store.
 */

export function describeIdempotencyKeys(keys: () => Store["idempotency"]): void {
  describe("idempotency keys", () => {
    const claim = (key: string, over: { fingerprint?: string; wallet?: string | null; now?: Date } = {}) =>
      keys().claimIdempotencyKey({
        key,
        wallet: over.wallet === undefined ? "0xabc" : over.wallet,
        fingerprint: over.fingerprint ?? "sha256:body",
        now: over.now ?? T0,
      });

    it("claims, reports in-progress, replays, and refuses another body or wallet", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key)).toEqual({ state: "new" });
      expect(await claim(key)).toEqual({ state: "in-progress" });
      expect(await claim(key, { fingerprint: "sha256:other" })).toEqual({ state: "conflict" });
      await keys().completeIdempotencyKey(key, {
        finishReason: "payment-complete",
        transactions: ["0x1"],
      });
      expect(await claim(key, { now: at(HOUR) })).toEqual({
        state: "replay",
        response: { finishReason: "payment-complete", transactions: ["0x1"] },
      });
      expect(await claim(key, { wallet: "0xdef" })).toEqual({ state: "conflict" });
      expect(await claim(key, { wallet: null })).toEqual({ state: "conflict" });
      // A completed key is not released.
      await keys().releaseIdempotencyKey(key);
      expect((await claim(key)).state).toBe("replay");
    });

    it("frees a released key and forgets keys after 24 h", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { wallet: null })).toEqual({ state: "new" });
      await keys().releaseIdempotencyKey(key);
      expect(await claim(key, { wallet: null })).toEqual({ state: "new" });
      await keys().completeIdempotencyKey(key, { ok: true });
      expect((await claim(key, { wallet: null, now: at(24 * HOUR - 1) })).state).toBe("replay");
      expect(await claim(key, { wallet: null, fingerprint: "sha256:new", now: at(24 * HOUR) })).toEqual({
        state: "new",
      });
      expect(await claim(key, { wallet: null, fingerprint: "sha256:new", now: at(24 * HOUR) })).toEqual({
        state: "in-progress",
      });
    });

    it("gives 'new' to exactly one of many concurrent claims", async () => {
      const key = `idem_${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 25 }, () => claim(key)));
      expect(results.filter((r) => r.state === "new")).toHaveLength(1);
      expect(results.filter((r) => r.state === "in-progress")).toHaveLength(24);
    });
  });
}
