import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Store } from "../index.js";
import { at, HOUR, T0 } from "./fixtures.js";

/**
 * The HTTP layer's idempotency store (src/http/idempotency.ts), written once and run inside the
 * ledger suite against every backend, on the same store.
 */

const LEASE = 10_000;

export function describeIdempotencyKeys(keys: () => Store["idempotency"]): void {
  describe("idempotency keys", () => {
    const claim = (
      key: string,
      over: {
        fingerprint?: string;
        wallet?: string | null;
        now?: Date;
        owner?: string;
        requestId?: string;
      } = {},
    ) =>
      keys().claimIdempotencyKey({
        key,
        wallet: over.wallet === undefined ? "0xabc" : over.wallet,
        fingerprint: over.fingerprint ?? "sha256:body",
        now: over.now ?? T0,
        owner: over.owner ?? "owner-a",
        leaseMs: LEASE,
        ...(over.requestId ? { requestId: over.requestId } : {}),
      });

    it("claims, reports in-progress, replays, and refuses another body or wallet", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key)).toEqual({ state: "new" });
      expect(await claim(key)).toEqual({ state: "in-progress" });
      expect(await claim(key, { fingerprint: "sha256:other" })).toEqual({ state: "conflict" });
      await keys().completeIdempotencyKey(key, "owner-a", {
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
      await keys().releaseIdempotencyKey(key, "owner-a");
      expect((await claim(key)).state).toBe("replay");
    });

    it("frees a released key and forgets keys after 24 h", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { wallet: null })).toEqual({ state: "new" });
      await keys().releaseIdempotencyKey(key, "owner-a");
      expect(await claim(key, { wallet: null })).toEqual({ state: "new" });
      await keys().completeIdempotencyKey(key, "owner-a", { ok: true });
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

    it("hands a claim whose lease lapsed to the next claimer, with the dead attempt's request id", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { requestId: "req-1" })).toEqual({ state: "new" });
      // The owner died: nobody renews. Within the lease the key is busy; from its end it is taken over.
      expect(await claim(key, { owner: "owner-b", now: at(LEASE - 1) })).toEqual({ state: "in-progress" });
      expect(await claim(key, { owner: "owner-b", now: at(LEASE), requestId: "req-2" })).toEqual({
        state: "taken-over",
        requestId: "req-1",
      });
      // The taker holds it now, under a lease of its own; the dead owner can no longer renew or release it.
      expect(await claim(key, { owner: "owner-c", now: at(LEASE + 1) })).toEqual({ state: "in-progress" });
      expect(await keys().renewIdempotencyKey(key, "owner-a", at(LEASE + 1), LEASE)).toBe(false);
      await keys().releaseIdempotencyKey(key, "owner-a");
      expect(await claim(key, { owner: "owner-c", now: at(LEASE + 2) })).toEqual({ state: "in-progress" });
      // The taker's outcome replays for the whole 24 h.
      await keys().completeIdempotencyKey(key, "owner-b", { events: ["rebuilt"] });
      expect(await claim(key, { owner: "owner-c", now: at(24 * HOUR - 1) })).toEqual({
        state: "replay",
        response: { events: ["rebuilt"] },
      });
    });

    it("keeps a claim whose owner renews it, and takes it over once renewal stops", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key)).toEqual({ state: "new" });
      for (let t = LEASE / 2; t <= 5 * LEASE; t += LEASE / 2) {
        expect(await keys().renewIdempotencyKey(key, "owner-a", at(t), LEASE)).toBe(true);
        expect(await claim(key, { owner: "owner-b", now: at(t + LEASE - 1) })).toEqual({
          state: "in-progress",
        });
      }
      expect((await claim(key, { owner: "owner-b", now: at(5 * LEASE + LEASE) })).state).toBe("taken-over");
      // A completed key holds no lease: renewing it does nothing.
      await keys().completeIdempotencyKey(key, "owner-b", { ok: 1 });
      expect(await keys().renewIdempotencyKey(key, "owner-b", at(6 * LEASE), LEASE)).toBe(false);
    });

    it("lets a lapsed claim be taken over at once, and keeps the first outcome stored", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { requestId: "req-1" })).toEqual({ state: "new" });
      await keys().lapseIdempotencyKey(key, "owner-b", at(1)); // not the owner: nothing changes
      expect(await claim(key, { owner: "owner-b", now: at(1) })).toEqual({ state: "in-progress" });
      await keys().lapseIdempotencyKey(key, "owner-a", at(1));
      expect(await claim(key, { owner: "owner-b", now: at(1) })).toEqual({
        state: "taken-over",
        requestId: "req-1",
      });
      await keys().completeIdempotencyKey(key, "owner-b", { first: true });
      await keys().completeIdempotencyKey(key, "owner-b", { first: false });
      expect(await claim(key, { now: at(2) })).toEqual({ state: "replay", response: { first: true } });
    });

    // A black-box review (h33): a takeover wrote the taker's request id at once, so when the taker
    // died too, the next retry was told to rebuild from it, found nothing and paid again; and an
    // attempt that had lost its claim still stored its outcome over the taker's.
    it("a takeover keeps naming the earlier attempt until the taker runs afresh; only the holder completes", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { requestId: "req-paid" })).toEqual({ state: "new" });
      const taker = { owner: "owner-b", now: at(LEASE), requestId: "req-b" };
      expect(await claim(key, taker)).toEqual({ state: "taken-over", requestId: "req-paid" });
      // The taker dies before deciding: the next one still rebuilds from the attempt that paid.
      const next = { owner: "owner-c", now: at(2 * LEASE), requestId: "req-c" };
      expect(await claim(key, next)).toEqual({ state: "taken-over", requestId: "req-paid" });
      // This one found nothing and runs afresh: its payments answer the key from now on.
      expect(await keys().adoptIdempotencyKey(key, "owner-b", "req-b")).toBe(false);
      expect(await keys().adoptIdempotencyKey(key, "owner-c", "req-c")).toBe(true);
      expect(await claim(key, { owner: "owner-d", now: at(3 * LEASE) })).toEqual({
        state: "taken-over",
        requestId: "req-c",
      });
      // The attempts that lost the key store nothing over the holder's outcome.
      await keys().completeIdempotencyKey(key, "owner-a", { stale: true });
      await keys().completeIdempotencyKey(key, "owner-c", { stale: true });
      expect(await claim(key, { owner: "owner-e", now: at(3 * LEASE + 1) })).toEqual({
        state: "in-progress",
      });
      await keys().completeIdempotencyKey(key, "owner-d", { holder: true });
      expect(await claim(key, { now: at(3 * LEASE + 2) })).toEqual({
        state: "replay",
        response: { holder: true },
      });
    });

    it("a taker that ran nothing lapses the claim naming the attempt whose payments answer it", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key, { requestId: "req-paid" })).toEqual({ state: "new" });
      await keys().lapseIdempotencyKey(key, "owner-a", at(1));
      // A retry takes over under its own request id, answers from req-paid's payments, lets go.
      const retry = { owner: "owner-b", now: at(1), requestId: "req-retry" };
      expect(await claim(key, retry)).toEqual({ state: "taken-over", requestId: "req-paid" });
      await keys().lapseIdempotencyKey(key, "owner-b", at(1), "req-paid");
      const next = { owner: "owner-c", now: at(2), requestId: "req-next" };
      expect(await claim(key, next)).toEqual({ state: "taken-over", requestId: "req-paid" });
    });

    it("gives a lapsed claim to exactly one of many racing takers", async () => {
      const key = `idem_${randomUUID()}`;
      expect(await claim(key)).toEqual({ state: "new" });
      const results = await Promise.all(
        Array.from({ length: 25 }, (_, i) => claim(key, { owner: `taker-${i}`, now: at(LEASE + 1) })),
      );
      expect(results.filter((r) => r.state === "taken-over")).toHaveLength(1);
      expect(results.filter((r) => r.state === "in-progress")).toHaveLength(24);
    });
  });
}
