import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "./migrate.js";
import { PgTabStore } from "./tabs.js";

/** A tab's refund record on the embedded database: kept once, cleared only as the one recorded. */

let client: PGlite;
let store: PgTabStore;
beforeAll(async () => {
  client = new PGlite("memory://");
  const db = drizzle(client);
  await migrate(db, "public");
  store = new PgTabStore(db);
}, 180_000);
afterAll(() => client.close());

const T = new Date("2026-11-29T12:00:00Z");

async function closingTab(tabId: string) {
  await store.create({
    tabId,
    wallet: "0x000000000000000000000000000000000000dEaD",
    network: "eip155:31337",
    asset: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    session: "0x000000000000000000000000000000000000bEEF",
    caller: null,
    tokenHash: `${tabId}-hash`,
    servesCaller: false,
    amount: 50_000n,
    opening: {},
    signBy: new Date(T.getTime() + 60_000),
    endsAt: new Date(T.getTime() + 3_600_000),
    createdAt: T,
  });
  for (const [from, to] of [
    ["awaiting_signature", "funding"],
    ["funding", "open"],
    ["open", "closing"],
  ] as const)
    expect(await store.move(tabId, from, to, {}, T)).toBe(true);
}

describe("a closing tab's refund record", () => {
  it("is kept by the first finisher only, and cleared only while it is still the one cleared", async () => {
    await closingTab("tab_refunds");
    const first = { authorization: { nonce: "0x01", from: "0xbeef" }, amount: "20000" };
    const second = { authorization: { nonce: "0x02", from: "0xbeef" }, amount: "20000" };
    expect(await store.setRefund("tab_refunds", first, T)).toBe(true);
    expect(await store.setRefund("tab_refunds", second, T)).toBe(false);
    // Another finisher cleared the first and recorded the second meanwhile: the first is not it.
    expect(await store.clearRefund("tab_refunds", first, T)).toBe(true);
    expect(await store.setRefund("tab_refunds", second, T)).toBe(true);
    expect(await store.clearRefund("tab_refunds", first, T)).toBe(false);
    expect((await store.get("tab_refunds"))?.refund).toEqual(second);
    // The record as read back (its keys in any order) clears it.
    const read = (await store.get("tab_refunds"))?.refund as typeof second;
    const reordered = { amount: read.amount, authorization: { from: "0xbeef", nonce: "0x02" } };
    expect(await store.clearRefund("tab_refunds", reordered, T)).toBe(true);
    expect((await store.get("tab_refunds"))?.refund).toBeNull();
  });
});
