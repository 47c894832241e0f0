import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { type AuditRecord, createAuditLog, MemoryAuditStore } from "../audit/index.js";
import { mountAuditRoutes } from "./operator-audit.js";

/** The audit trail's operator routes (unit: the app in process, the trail in memory). */

const TOKEN = "operator-token-operator-token-0123";
const T = new Date("2026-03-01T12:00:00.000Z");

async function app() {
  const store = new MemoryAuditStore();
  const audit = createAuditLog({ store });
  for (let i = 0; i < 3; i++) {
    audit.append({
      at: new Date(T.getTime() + i * 60_000),
      kind: "payment.refused",
      caller: `k${i}`,
      data: {
        reason: "limit_exceeded",
        message: `refused ${i}`,
        service: "https://s.example/",
        amountUsd: "1.00",
      },
    });
  }
  await audit.flush();
  const hono = new Hono();
  mountAuditRoutes(hono, {
    audit,
    guard: async (c, next) => {
      if (c.req.header("authorization") !== `Bearer ${TOKEN}`) return c.json({ code: "unauthorized" }, 401);
      await next();
    },
  });
  const get = (path: string, token = TOKEN) =>
    hono.request(path, { headers: { authorization: `Bearer ${token}` } });
  return { store, get };
}

describe("operator audit routes", () => {
  it("verify: the chain holds, then names the record changed", async () => {
    const { store, get } = await app();
    expect((await get("/api/operator/audit/verify", "wrong")).status).toBe(401);
    const ok = await get("/api/operator/audit/verify");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, records: 3 });
    (store.records[1] as AuditRecord).caller = "someone-else";
    expect(await (await get("/api/operator/audit/verify")).json()).toMatchObject({
      ok: false,
      records: 1,
      firstBad: { seq: 2, problem: "changed", kind: "payment.refused", at: "2026-03-01T12:01:00.000Z" },
    });
  });

  it("export: JSON lines from `since` on; a bad `since` is a 400 naming it", async () => {
    const { get } = await app();
    const response = await get("/api/operator/audit?since=2026-03-01T12:01:00Z");
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((r) => r.seq)).toEqual([2, 3]);
    expect(lines[0]).toMatchObject({ kind: "payment.refused", caller: "k1", at: "2026-03-01T12:01:00.000Z" });
    const all = await get("/api/operator/audit");
    expect((await all.text()).trim().split("\n")).toHaveLength(3);
    const bad = await get("/api/operator/audit?since=yesterday");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "invalid_request", errors: [{ path: "since" }] });
    expect((await get("/api/operator/audit?until=2026-03-01")).status).toBe(400);
    // Year 0: JavaScript reads it, PostgreSQL refuses it. The caller's error, not the store's.
    expect((await get("/api/operator/audit?since=0000-01-01")).status).toBe(400);
    // A day the calendar lacks is refused, not rolled over into the next month.
    expect((await get("/api/operator/audit?since=2026-02-30")).status).toBe(400);
    expect((await get("/api/operator/audit?since=2026-04-31T10:00:00Z")).status).toBe(400);
    expect((await get("/api/operator/audit?since=2028-02-29")).status).toBe(200);
  });

  it("refusals: newest first, bounded by limit", async () => {
    const { get } = await app();
    const body = (await (await get("/api/operator/refusals?limit=2")).json()) as { refusals: unknown[] };
    expect(body.refusals).toEqual([
      {
        at: "2026-03-01T12:02:00.000Z",
        caller: "k2",
        reason: "limit_exceeded",
        message: "refused 2",
        service: "https://s.example/",
        amountUsd: "1.00",
      },
      expect.objectContaining({ caller: "k1" }),
    ]);
    expect((await get("/api/operator/refusals?limit=0")).status).toBe(400);
    expect((await get("/api/operator/refusals?limit=x")).status).toBe(400);
  });
});
