import { afterAll, describe, expect, it } from "vitest";
import { DELIVERED_MAX_CHARS, DELIVERED_TTL_MS, type DeliveredData } from "../payments/ports/index.js";
import { openMemoryStore, openStore, type Store } from "./index.js";
import { MEMORY_DELIVERED_MAX, MemoryDeliveredData } from "./memory/index.js";

/** What the approval page delivered, kept for the payment's caller: the same contract in memory and SQL. */

const T = new Date("2026-03-01T12:00:00.000Z");
const at = (ms: number) => new Date(T.getTime() + ms);
const stores: Store[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

function describeDelivered(name: string, open: () => Promise<Store>) {
  describe(`kept answers (${name})`, () => {
    const kept = async (): Promise<DeliveredData> => {
      const store = await open();
      stores.push(store);
      return store.delivered;
    };

    it("keeps an answer 24 h, and the first answer's hash stays when the data comes", async () => {
      const d = await kept();
      await d.keep({ paymentId: "pay_a", answerHash: "h1", keptAt: T });
      expect(await d.read("pay_a", T)).toEqual({ paymentId: "pay_a", answerHash: "h1", keptAt: T });
      await d.keep({
        paymentId: "pay_a",
        answerHash: "h2",
        data: { body: { city: "Paris" } },
        keptAt: at(1000),
      });
      expect(await d.read("pay_a", at(2000))).toMatchObject({
        answerHash: "h1",
        data: { body: { city: "Paris" } },
      });
      expect(await d.read("pay_a", at(1000 + DELIVERED_TTL_MS - 1))).toBeDefined();
      expect(await d.read("pay_a", at(1000 + DELIVERED_TTL_MS))).toBeUndefined();
      expect(await d.read("pay_b", T)).toBeUndefined();
    });

    it("bounds what it keeps: an answer over the limit is kept as truncated, without its body", async () => {
      const d = await kept();
      await d.keep({
        paymentId: "pay_big",
        answerHash: "h",
        data: { body: "x".repeat(DELIVERED_MAX_CHARS) },
        keptAt: T,
      });
      expect((await d.read("pay_big", T))?.data).toMatchObject({ truncated: true, body: null });
    });
  });
}

describeDelivered("memory", async () => openMemoryStore());
describeDelivered("PGlite", () => openStore({ dataDir: "memory://" }));

describe("kept answers in memory", () => {
  it("holds at most MEMORY_DELIVERED_MAX entries, dropping the oldest kept", async () => {
    const d = new MemoryDeliveredData();
    for (let i = 0; i <= MEMORY_DELIVERED_MAX; i++)
      await d.keep({ paymentId: `pay_${i}`, answerHash: "h", keptAt: at(i) });
    expect(await d.read("pay_0", at(MEMORY_DELIVERED_MAX))).toBeUndefined();
    expect(await d.read("pay_1", at(MEMORY_DELIVERED_MAX))).toBeDefined();
    expect(await d.read(`pay_${MEMORY_DELIVERED_MAX}`, at(MEMORY_DELIVERED_MAX))).toBeDefined();
  });
});
