import { describe, expect, it, vi } from "vitest";
import { AppError } from "../errors/index.js";
import type { PaymentRecord } from "../payments/ports/index.js";
import { MemoryOperatorStore } from "../store/operator.js";
import {
  ControlPlane,
  grantOf,
  hashToken,
  type KeyRecord,
  keyStatus,
  newToken,
  OPERATOR_REFRESH_MS,
  OperatorCache,
  type OperatorEvent,
  PROPAGATION_MS,
  parseDuration,
  pauseTargetOf,
  TOKEN_PREFIX,
  walletAllowed,
} from "./index.js";

/**
 * docs/deploy.md#operating-it: operator keys (tokens, hashes, expiry, what a key allows) and the
 * kill switch's scopes, on the memory store with a clock the test sets.
 */

const EVM = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const HOUR = 3_600_000;

function setup() {
  let ms = Date.parse("2026-05-01T12:00:00Z");
  const now = () => new Date(ms);
  const store = new MemoryOperatorStore();
  const cache = new OperatorCache(store, { now });
  const events: OperatorEvent[] = [];
  const plane = new ControlPlane({
    store,
    now,
    afterChange: () => cache.refresh(),
    onChange: (e) => events.push(e),
  });
  const advance = (by: number) => {
    ms += by;
  };
  return { store, cache, plane, events, advance, now };
}

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
};

describe("keys", () => {
  it("tokens are the prefix and 32 random bytes; the store keeps a SHA-256 of each", () => {
    const a = newToken();
    const b = newToken();
    expect(a.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(Buffer.from(a.slice(TOKEN_PREFIX.length), "base64url")).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(hashToken(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(a)).not.toBe(hashToken(b));
  });

  it("durations: 90m, 12h, 30d; anything else is refused", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("12h")).toBe(12 * HOUR);
    expect(parseDuration("30d")).toBe(30 * 24 * HOUR);
    for (const bad of ["", "0h", "12", "1.5h", "-3d", "3w", "99999999d"])
      expect(parseDuration(bad), bad).toBeUndefined();
  });

  it("a key is active until it expires or is revoked", () => {
    const key = { revokedAt: null, expiresAt: new Date(10_000) };
    expect(keyStatus(key, new Date(9_999))).toBe("active");
    expect(keyStatus(key, new Date(10_000))).toBe("expired");
    expect(keyStatus({ ...key, revokedAt: new Date(1) }, new Date(0))).toBe("revoked");
    expect(keyStatus({ revokedAt: null, expiresAt: null }, new Date(8e15))).toBe("active");
  });

  it("a key's grant carries its caps and wallets, and nothing it does not set", () => {
    const key: KeyRecord = {
      name: "ci",
      tokenHash: "h",
      scopes: ["chat"],
      wallets: [EVM],
      perTransaction: 250_000n,
      perRequest: null,
      daily: 5_000_000n,
      createdAt: new Date(0),
      createdBy: "t",
      expiresAt: null,
      revokedAt: null,
    };
    const caps = { name: "ci", perTransaction: 250_000n, daily: 5_000_000n, wallets: [EVM] };
    expect(grantOf(key)).toEqual({ ...caps, generation: 0 }); // never rotated
    expect(grantOf({ ...key, retiredHashes: ["h0", "h1"] })).toEqual({ ...caps, generation: 2 });
    expect(walletAllowed([EVM], EVM.toLowerCase())).toBe(true);
    expect(walletAllowed([EVM], "0x0000000000000000000000000000000000000001")).toBe(false);
  });
});

describe("the control plane and each instance's copy", () => {
  it("a created key authenticates with its token, shown once; the view holds no secret", async () => {
    const { plane, cache, events } = setup();
    const { key, token } = await plane.createKey(
      { name: "ci", perTransaction: "0.25", daily: "5", wallets: [EVM.toLowerCase()], expiresIn: "12h" },
      "alice",
    );
    expect(key).toMatchObject({
      name: "ci",
      scopes: ["chat", "mcp", "history"],
      wallets: [EVM],
      limits: { perTransaction: "0.25", perRequest: null, daily: "5.00" },
      status: "active",
      expiresAt: "2026-05-02T00:00:00.000Z",
      spentTodayUsd: "0.00",
    });
    expect(JSON.stringify(await plane.listKeys())).not.toContain(token);
    expect(JSON.stringify(events)).not.toContain(token);
    expect(events.map((e) => [e.kind, e.by, e.key])).toEqual([["key.created", "alice", "ci"]]);
    expect(cache.lookup(token)).toMatchObject({ kind: "active", name: "ci", grant: { daily: 5_000_000n } });
    expect(cache.lookup(`${token}x`)).toEqual({ kind: "none" });
  });

  it("refuses a taken name (409) and bad input, naming each field (400)", async () => {
    const { plane } = setup();
    await plane.createKey({ name: "ci" }, "t");
    expect((await refusal(plane.createKey({ name: "ci" }, "t"))).code).toBe("key_exists");
    // Another caller's name: its payments and approvals are bound to it.
    const named = new ControlPlane({ store: new MemoryOperatorStore(), callerNames: ["alice"] });
    for (const name of [
      "alice",
      "devnet",
      "signer-1",
      "anonymous",
      "jwt",
      "other",
      "DEVNET",
      "Signer-2",
      "Other",
    ])
      expect((await refusal(named.createKey({ name }, "t"))).code, name).toBe("key_exists");
    const bad = await refusal(
      plane.createKey(
        { name: "no spaces", daily: "-1", wallets: ["0x12"], expiresIn: "soon", scopes: ["admin"] },
        "t",
      ),
    );
    expect(bad.code).toBe("invalid_request");
    expect(bad.fields?.map((f) => f.path).sort()).toEqual([
      "daily",
      "expiresIn",
      "name",
      "scopes",
      "wallets.0",
    ]);
    // An unknown field is named too, not dropped (found by a black-box run: `isAdmin: true` was 201).
    const extra = await refusal(plane.createKey({ name: "ci2", isAdmin: true, dayly: "5" }, "t"));
    expect(extra.fields?.map((f) => f.path).sort()).toEqual(["dayly", "isAdmin"]);
  });

  it("refuses caps the store cannot keep and pause reasons a terminal would act on (400, not 500)", async () => {
    const { plane } = setup();
    // Caps are kept as 64-bit atomic units: 15 whole digits parse but would overflow the column.
    for (const daily of ["999999999999999", 99_999_999_999_999, "1000000000000.000001"]) {
      const bad = await refusal(plane.createKey({ name: "big", daily }, "t"));
      expect([bad.code, bad.fields?.map((f) => f.path)], String(daily)).toEqual([
        "invalid_request",
        ["daily"],
      ]);
    }
    expect((await plane.createKey({ name: "big", daily: "1000000000000" }, "t")).key.limits.daily).toBe(
      "1000000000000.00",
    );
    // NUL fails PostgreSQL's text; escapes and newlines rewrite the operator's terminal (`pause`).
    for (const reason of [
      "a\u0000b",
      "\u001b[2J",
      "two\nlines",
      "lone \ud800",
      "c1 \u009b",
      "rtl \u202egnp.exe",
      "zero\u200bwidth",
      "b\ufeffom",
      "arabic mark \u061c",
      "x".repeat(501),
    ])
      expect((await refusal(plane.pause({ all: true }, reason, "t"))).code, JSON.stringify(reason)).toBe(
        "invalid_request",
      );
    expect((await plane.pause({ all: true }, "incident 7: ключ ✓", "t"))[0]?.reason).toBe(
      "incident 7: ключ ✓",
    );
    // Counted in characters: 500 emoji (1,000 UTF-16 units) is 500; joined emoji keep their joiner.
    expect((await plane.pause({ all: true }, "🔥".repeat(500), "t"))[0]?.reason).toHaveLength(1000);
    expect((await plane.pause({ all: true }, "on call: 👩‍💻", "t"))[0]?.reason).toBe("on call: 👩‍💻");
  });

  it("revoke and expiry end a key; rotate replaces its token", async () => {
    const { plane, cache, advance } = setup();
    const a = await plane.createKey({ name: "a", expiresIn: "90m" }, "t");
    const b = await plane.createKey({ name: "b" }, "t");
    advance(90 * 60_000);
    expect(cache.lookup(a.token)).toEqual({ kind: "expired", name: "a" });
    const rotated = await plane.rotateKey("b", "t");
    // The old token is the key's still, refused: never an unknown token a SIGNERS_FILE may list.
    expect(cache.lookup(b.token)).toEqual({ kind: "rotated", name: "b" });
    const again = await plane.rotateKey("b", "t");
    expect(cache.lookup(b.token)).toEqual({ kind: "rotated", name: "b" });
    expect(cache.lookup(rotated.token)).toEqual({ kind: "rotated", name: "b" });
    expect(cache.lookup(again.token)).toMatchObject({ kind: "active", name: "b" });
    expect((await plane.revokeKey("b", "t")).status).toBe("revoked");
    expect(cache.lookup(again.token)).toEqual({ kind: "revoked", name: "b" });
    expect((await refusal(plane.rotateKey("b", "t"))).code).toBe("invalid_request");
    expect((await refusal(plane.revokeKey("nobody", "t"))).code).toBe("not_found");
    // What an approval asked for by a key reads of it (keyEnded): ended, or still in force.
    await plane.createKey({ name: "c" }, "t");
    expect([cache.keyEnded("a"), cache.keyEnded("b"), cache.keyEnded("c")]).toEqual([
      "expired",
      "revoked",
      undefined,
    ]);
    expect(cache.keyEnded("alice")).toBeUndefined(); // a caller that is no key
  });

  // Found by a black-box run (h48): a turn running on a token rotated away went on signing.
  it("a request of a token rotated away since reads its key as ended (rotated); the new token's does not", async () => {
    const { plane, cache } = setup();
    const first = await plane.createKey({ name: "d" }, "t");
    const before = cache.lookup(first.token);
    if (before.kind !== "active") throw new Error("not active");
    const generation = before.grant.generation;
    expect(cache.keyEnded("d", generation)).toBeUndefined();
    const rotated = await plane.rotateKey("d", "t");
    expect(cache.keyEnded("d", generation)).toBe("rotated");
    const after = cache.lookup(rotated.token);
    if (after.kind !== "active") throw new Error("not active");
    expect(cache.keyEnded("d", after.grant.generation)).toBeUndefined();
    // Without a generation (an approval on the page, which has no token): a rotated key is in force.
    expect(cache.keyEnded("d")).toBeUndefined();
  });

  it("a rotate racing a revoke: revoked after the rotate's read, the rotate is refused, no token made", async () => {
    const { plane, store, cache, events } = setup();
    const c = await plane.createKey({ name: "c" }, "t");
    const list = store.listKeys.bind(store);
    store.listKeys = async () => {
      const keys = await list();
      await store.revokeKey("c", new Date()); // the other instance's revoke lands now
      return keys;
    };
    expect((await refusal(plane.rotateKey("c", "t"))).code).toBe("invalid_request");
    store.listKeys = list;
    await cache.refresh();
    expect(cache.lookup(c.token)).toEqual({ kind: "revoked", name: "c" });
    expect(events.filter((e) => e.kind === "key.rotated")).toEqual([]);
  });

  // Found by a black-box run (h48): a second rotation made while the first waited for every instance
  // to read it also answered 200, and the first answered with a token that never worked.
  it("a rotation, or a revoke, made while a rotation propagates: that rotation answers no token", async () => {
    for (const second of ["rotate", "revoke"] as const) {
      const store = new MemoryOperatorStore();
      let later: Promise<unknown> | undefined;
      const plane: ControlPlane = new ControlPlane({
        store,
        propagationMs: 20,
        onChange: (e) => {
          if (e.kind !== "key.rotated" || later) return;
          later = second === "rotate" ? plane.rotateKey("e", "op-b") : plane.revokeKey("e", "op-b");
        },
      });
      await plane.createKey({ name: "e" }, "t");
      const first = await refusal(plane.rotateKey("e", "op-a"));
      expect(first.code, second).toBe("invalid_request");
      expect(first.message, second).toMatch(second === "rotate" ? /rotated again/ : /revoked/);
      const won = await later;
      const cache = new OperatorCache(store);
      await cache.refresh();
      if (second === "rotate") expect(cache.lookup((won as { token: string }).token).kind).toBe("active");
    }
  });

  // Found by a review (h53): the read after the rotation's write failed, and its token was lost.
  it("a rotation whose read after propagating fails still answers with its token, which works", async () => {
    const { plane, store, cache } = setup();
    const created = await plane.createKey({ name: "f" }, "t");
    const list = store.listKeys.bind(store);
    const rotate = store.rotateKey.bind(store);
    let written = false;
    store.rotateKey = async (...args) => {
      const done = await rotate(...args);
      written = true; // from here on the database is gone: every read fails
      return done;
    };
    store.listKeys = async () => {
      if (written) throw new Error("database connection lost");
      return list();
    };
    const rotated = await plane.rotateKey("f", "t");
    store.listKeys = list;
    await cache.refresh();
    expect(cache.lookup(created.token).kind).toBe("rotated");
    expect(cache.lookup(rotated.token).kind).toBe("active");
  });

  // Found by a black-box run: three rotations at once all answered 200 with a token; one worked.
  it("rotations at once: one answers with the token that works, the others are refused", async () => {
    const { plane, cache, events } = setup();
    await plane.createKey({ name: "ci" }, "t");
    const results = await Promise.allSettled([
      plane.rotateKey("ci", "t"),
      plane.rotateKey("ci", "t"),
      plane.rotateKey("ci", "t"),
    ]);
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(won).toHaveLength(1);
    for (const r of results)
      if (r.status === "rejected") expect(String(r.reason)).toMatch(/rotated by another request/);
    await cache.refresh();
    expect(cache.lookup(won[0]?.token ?? "").kind).toBe("active");
    expect(events.filter((e) => e.kind === "key.rotated")).toHaveLength(1);
  });

  it("the operator's payments read one awaiting approval past its window as expired", async () => {
    const at = new Date("2026-05-01T12:00:00Z");
    const row = {
      paymentId: "pay_1",
      caller: "ci",
      wallet: EVM,
      service: "https://svc.example/x",
      network: "eip155:84532",
      amount: 10_000n,
      status: "awaiting_approval",
      createdAt: at,
      updatedAt: at,
      txHash: null,
      expiresAt: new Date(at.getTime() + 60_000),
    } as unknown as PaymentRecord;
    let ms = at.getTime();
    const store = new MemoryOperatorStore({ listByStatus: async () => [row] });
    const plane = new ControlPlane({ store, now: () => new Date(ms) });
    expect((await plane.payments(10))[0]?.status).toBe("awaiting_approval");
    ms += 60_000;
    expect((await plane.payments(10))[0]?.status).toBe("expired");
  });

  it("pause scopes: all pauses everyone, a key's pauses that key only; resume lifts each", async () => {
    const { plane, cache, events } = setup();
    await plane.createKey({ name: "ci" }, "t");
    expect(cache.pausedFor("ci")).toBeUndefined();
    await plane.pause({ key: "ci" }, "runaway loop", "bob");
    expect(cache.pausedFor("ci")).toMatchObject({ scope: "key", key: "ci", reason: "runaway loop" });
    expect(cache.pausedFor("other")).toBeUndefined();
    expect(cache.pausedFor(undefined)).toBeUndefined();
    const pauses = await plane.pause({ all: true }, "incident 7", "bob");
    expect(pauses.map((p) => p.scope).sort()).toEqual(["all", "key"]);
    expect(cache.pausedFor(undefined)).toMatchObject({ scope: "all", reason: "incident 7" });
    expect(cache.pausedFor("ci")?.scope).toBe("all");
    await plane.resume({ all: true }, "bob");
    expect(cache.pausedFor("other")).toBeUndefined();
    expect(cache.pausedFor("ci")?.scope).toBe("key");
    expect(await plane.resume({ key: "ci" }, "bob")).toEqual([]);
    expect(cache.pausedFor("ci")).toBeUndefined();
    expect(events.filter((e) => e.kind.startsWith("pause")).map((e) => [e.kind, e.scope])).toEqual([
      ["pause.set", "key"],
      ["pause.set", "all"],
      ["pause.cleared", "all"],
      ["pause.cleared", "key"],
    ]);
    expect((await refusal(plane.pause({ key: "nobody" }, "x", "t"))).code).toBe("not_found");
    // A typo in resume is said, as in pause; a key's resume with nothing to lift is not an error.
    expect((await refusal(plane.resume({ key: "nobody" }, "t"))).code).toBe("not_found");
    expect(await plane.resume({ key: "ci" }, "bob")).toEqual([]);
    expect((await refusal(plane.pause({ all: true }, "  ", "t"))).code).toBe("invalid_request");
  });

  it("a pause's scope is all or one key, never both or neither", () => {
    expect(pauseTargetOf({ all: true })).toEqual({ all: true });
    expect(pauseTargetOf({ key: "ci" })).toEqual({ key: "ci" });
    const notAName = [{ key: "" }, { key: "../ci" }, { key: "k".repeat(10_000) }, { key: "jwt:bob" }];
    for (const bad of [{}, { all: false }, { all: true, key: "ci" }, null, { key: 3 }, [], ...notAName])
      expect(() => pauseTargetOf(bad), JSON.stringify(bad)).toThrow(AppError);
  });

  it("a change on another instance reaches this one's copy on its next refresh", async () => {
    const { store, plane } = setup();
    const other = new OperatorCache(store);
    const { token } = await plane.createKey({ name: "ci" }, "t");
    expect(other.lookup(token).kind).toBe("none");
    await other.refresh();
    expect(other.lookup(token).kind).toBe("active");
    await plane.revokeKey("ci", "t");
    await other.refresh();
    expect(other.lookup(token).kind).toBe("revoked");
  });

  /*
   * Found by a black-box run: a pause answered 200 on one instance while another still signed for
   * up to half a second. A pause now answers only once every instance's copy has surely read it.
   */
  it("a pause, and a resume, answers once another instance's copy holds it", async () => {
    vi.useFakeTimers();
    try {
      const store = new MemoryOperatorStore();
      const other = new OperatorCache(store, { intervalMs: OPERATOR_REFRESH_MS });
      other.start();
      const plane = new ControlPlane({ store, propagationMs: PROPAGATION_MS });
      let answered = false;
      const pausing = plane.pause({ all: true }, "incident", "t").then(() => {
        answered = true;
      });
      await vi.advanceTimersByTimeAsync(2 * OPERATOR_REFRESH_MS);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      await pausing;
      expect(other.pausedFor(undefined)).toMatchObject({ scope: "all" });
      // A resume likewise (h48: it answered while another instance still refused for half a second).
      answered = false;
      const resuming = plane.resume({ all: true }, "t").then(() => {
        answered = true;
      });
      await vi.advanceTimersByTimeAsync(2 * OPERATOR_REFRESH_MS);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      await resuming;
      expect(other.pausedFor(undefined)).toBeUndefined();
      other.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  // Found by a black-box run: a revoke answered on one instance, and another approved the key's payment.
  it.each([
    ["a revoke", (plane: ControlPlane) => plane.revokeKey("ci", "t"), "revoked"],
    ["a rotate", (plane: ControlPlane) => plane.rotateKey("ci", "t"), "rotated"],
  ] as const)(
    "%s answers once another instance's copy no longer takes the old token",
    async (_what, change, after) => {
      vi.useFakeTimers();
      try {
        const store = new MemoryOperatorStore();
        const plane = new ControlPlane({ store, propagationMs: PROPAGATION_MS });
        const { token } = await plane.createKey({ name: "ci" }, "t");
        const other = new OperatorCache(store, { intervalMs: OPERATOR_REFRESH_MS });
        await other.refresh();
        other.start();
        expect(other.lookup(token).kind).toBe("active");
        let answered = false;
        const changing = change(plane).then(() => {
          answered = true;
        });
        await vi.advanceTimersByTimeAsync(2 * OPERATOR_REFRESH_MS);
        expect(answered).toBe(false);
        await vi.advanceTimersByTimeAsync(100);
        await changing;
        expect(other.lookup(token).kind).toBe(after);
        other.stop();
      } finally {
        vi.useRealTimers();
      }
    },
  );

  // Found by a black-box run: a frozen database logged a warning with its stack twice a second.
  it("a store that stays down is reported at its first failed read, then once a minute, then when it is back", async () => {
    vi.useFakeTimers();
    try {
      const store = new MemoryOperatorStore();
      let down = true;
      const flaky: typeof store = Object.create(store);
      flaky.listKeys = async () => {
        if (down) throw new Error("store down");
        return store.listKeys();
      };
      const reported: number[] = [];
      const recovered: number[] = [];
      const cache = new OperatorCache(flaky, {
        intervalMs: OPERATOR_REFRESH_MS,
        onError: (_error, failures) => reported.push(failures),
        onRecovered: (failures) => recovered.push(failures),
      });
      cache.start();
      await vi.advanceTimersByTimeAsync(90_000);
      expect(reported).toEqual([1, 120]);
      down = false;
      await vi.advanceTimersByTimeAsync(OPERATOR_REFRESH_MS);
      expect(recovered).toEqual([180]);
      await vi.advanceTimersByTimeAsync(10 * OPERATOR_REFRESH_MS);
      expect(recovered).toEqual([180]);
      cache.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a refresh asked for during an older read reads again: a revoke just made is seen", async () => {
    const { store, plane } = setup();
    const { token } = await plane.createKey({ name: "ci" }, "t");
    // The store answers listKeys only when the test lets it: a read under way before the revoke.
    const gates: Array<() => void> = [];
    const gated: typeof store = Object.create(store);
    gated.listKeys = async () => {
      const keys = await store.listKeys();
      await new Promise<void>((open) => gates.push(open));
      return keys;
    };
    const other = new OperatorCache(gated);
    const older = other.refresh();
    await new Promise((r) => setImmediate(r));
    await plane.revokeKey("ci", "t");
    const after = other.refresh();
    gates.shift()?.();
    await older;
    expect(other.lookup(token).kind).toBe("active");
    await new Promise((r) => setImmediate(r));
    gates.shift()?.();
    await after;
    expect(other.lookup(token).kind).toBe("revoked");
  });
});

/*
 * Found by a review: a change written to the store whose refresh of this instance's copy then failed
 * (a slow read) answered 5xx with no audit record; a key created so never showed its token.
 */
describe("a change whose refresh or spending read fails", () => {
  class FlakyStore extends MemoryOperatorStore {
    failReads = false;
    failSpent = false;
    override async listPauses() {
      if (this.failReads) throw new AppError("store_unavailable", "read timed out");
      return super.listPauses();
    }
    override async committedSince(name: string, since: Date) {
      if (this.failSpent) throw new AppError("store_unavailable", "read timed out");
      return super.committedSince(name, since);
    }
  }

  it("is recorded and answered: the change stands, and its copy is read by the timer", async () => {
    const store = new FlakyStore();
    const cache = new OperatorCache(store);
    const events: OperatorEvent[] = [];
    const plane = new ControlPlane({
      store,
      afterChange: () => cache.refresh(),
      onChange: (e) => events.push(e),
    });
    store.failReads = true;
    store.failSpent = true;
    const created = await plane.createKey({ name: "ci" }, "tests");
    expect(created.token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(created.key.spentTodayUsd).toBe("0.00");
    store.failSpent = false;
    const revoked = await plane.revokeKey("ci", "tests");
    expect(revoked.status).toBe("revoked");
    await plane.createKey({ name: "cd" }, "tests");
    expect((await plane.rotateKey("cd", "tests")).token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(["key.created", "key.revoked", "key.created", "key.rotated"]);
    // A spending read that fails before a rotation changes nothing: the old token still works.
    store.failSpent = true;
    const before = (await store.listKeys()).find((k) => k.name === "cd")?.tokenHash;
    await expect(plane.rotateKey("cd", "tests")).rejects.toThrow(/timed out/);
    expect((await store.listKeys()).find((k) => k.name === "cd")?.tokenHash).toBe(before);
  });
});
