import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS, type IdempotencyStore, PURGE_EVERY } from "../idempotency/index.js";
import { PgIdempotencyStore } from "./idempotency.js";
import { MemoryIdempotencyStore } from "./memory/idempotency.js";
import { migrate } from "./migrate.js";
import { T0 } from "./testing/fixtures.js";

/**
 * Keys are kept 24 hours (docs/protocol.md): found by a review, none was ever deleted, each with
 * its whole answer, so the table only grew. Past their time they are deleted as keys are claimed.
 */

let client: PGlite;
beforeAll(async () => {
  client = new PGlite("memory://");
  await migrate(drizzle(client), "public");
}, 180_000);
afterAll(() => client.close());

const LATER = new Date(T0.getTime() + IDEMPOTENCY_TTL_MS + 1);

async function keep(store: IdempotencyStore, count: number, now: Date) {
  for (let i = 0; i < count; i++) {
    const key = `k-${now.getTime()}-${i}`;
    await store.claimIdempotencyKey({
      key,
      wallet: null,
      fingerprint: "f",
      now,
      owner: "o",
      leaseMs: 10_000,
    });
    await store.completeIdempotencyKey(key, "o", { events: [{ type: "text", text: "x".repeat(1000) }] });
  }
}

describe("idempotency keys past their 24 hours", () => {
  it("are deleted on PostgreSQL (PGlite) as new keys are claimed, a batch at a time", async () => {
    await keep(new PgIdempotencyStore(drizzle(client)), 70, T0);
    const count = async () =>
      Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM idempotency_keys")).rows[0]?.n);
    expect(await count()).toBe(70);
    const later = new PgIdempotencyStore(drizzle(client));
    await keep(later, 1, LATER);
    expect(await count()).toBe(1);
  });

  it("are deleted from memory the same way", async () => {
    const store = new MemoryIdempotencyStore();
    await keep(store, 70, T0);
    expect(store.size).toBe(70);
    await keep(store, PURGE_EVERY * 2 - 70 + 1, LATER); // up to the next claim that purges
    expect(store.size).toBe(PURGE_EVERY * 2 - 70 + 1);
  });
});
