import { afterEach, describe, expect, it, vi } from "vitest";
import { holdClaim, type IdempotencyStore } from "../src/http/idempotency.js";

/** The heartbeat that keeps a claim's lease alive while its attempt runs (src/http/idempotency.ts). */
/** Only the timers are faked (never the global Date): the claim reads the fake time through its clock. */
const TIMERS: Array<"setTimeout" | "clearTimeout" | "setInterval" | "clearInterval"> = [
  "setTimeout",
  "clearTimeout",
  "setInterval",
  "clearInterval",
];
const clock = () => vi.getMockedSystemTime() ?? new Date(0);

describe("a held idempotency claim", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function recordingStore(held = true) {
    const calls: string[] = [];
    const store: IdempotencyStore = {
      claimIdempotencyKey: async () => ({ state: "new" }),
      renewIdempotencyKey: async (key, owner, now, leaseMs) => {
        calls.push(`renew ${key} ${owner} until ${now.getTime() + leaseMs}`);
        return held;
      },
      completeIdempotencyKey: async () => {
        calls.push("complete");
      },
      releaseIdempotencyKey: async (_key, owner) => {
        calls.push(`release ${owner}`);
      },
      lapseIdempotencyKey: async (_key, owner, now) => {
        calls.push(`lapse ${owner} at ${now.getTime()}`);
      },
      adoptIdempotencyKey: async () => held,
    };
    return { store, calls };
  }

  it("renews its lease every third of it until completed, then stops", async () => {
    vi.useFakeTimers({ now: 0, toFake: TIMERS });
    const { store, calls } = recordingStore();
    const claim = holdClaim(store, "k", "me", 9_000, () => {}, clock);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(calls).toEqual(["renew k me until 12000", "renew k me until 15000", "renew k me until 18000"]);
    await claim.complete({ events: [] });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls.slice(3)).toEqual(["complete"]);
  });

  it("stops renewing once released or lapsed, and when the key was taken over", async () => {
    vi.useFakeTimers({ now: 0, toFake: TIMERS });
    const released = recordingStore();
    await holdClaim(released.store, "k", "me", 9_000, () => {}, clock).release();
    const lapsed = recordingStore();
    await holdClaim(lapsed.store, "k", "me", 9_000, () => {}, clock).lapse();
    const lost = recordingStore(false);
    holdClaim(lost.store, "k", "me", 9_000, () => {}, clock);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(released.calls).toEqual(["release me"]);
    expect(lapsed.calls).toEqual(["lapse me at 0"]);
    expect(lost.calls).toEqual(["renew k me until 12000"]);
  });

  it("counts as lost when taken over, or when no renewal succeeded for two thirds of the lease, and never while renewals succeed", async () => {
    vi.useFakeTimers({ now: 0, toFake: TIMERS });
    const healthy = holdClaim(recordingStore().store, "k", "me", 9_000, () => {}, clock);
    const taken = holdClaim(recordingStore(false).store, "k", "me", 9_000, () => {}, clock);
    const { store: down } = recordingStore();
    down.renewIdempotencyKey = async () => {
      throw new Error("store unreachable");
    };
    const errors: unknown[] = [];
    const unreachable = holdClaim(down, "k", "me", 9_000, (e) => errors.push(e), clock);

    await vi.advanceTimersByTimeAsync(3_000);
    expect(taken.lost.aborted).toBe(true);
    expect(unreachable.lost.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(unreachable.lost.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(unreachable.lost.aborted).toBe(true);
    expect(errors.length).toBeGreaterThan(0);

    await vi.advanceTimersByTimeAsync(60_000);
    expect(healthy.lost.aborted).toBe(false);
    await healthy.complete({ events: [] });
    expect(healthy.lost.aborted).toBe(false);
  });
});
