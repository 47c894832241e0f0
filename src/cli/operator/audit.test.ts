import { describe, expect, it } from "vitest";
import type { VerifyReport } from "../../audit/index.js";
import { type AuditBackend, auditExport, auditVerify, httpAuditBackend } from "./audit.js";

/** `audit verify` and `audit export` (unit): exit codes and what they print, over a backend. */

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } },
  };
}

const backend = (report: VerifyReport, records: object[] = []): AuditBackend => ({
  verify: async () => report,
  async *export() {
    yield* records;
  },
});

describe("audit commands", () => {
  it("verify: 0 when the chain holds", async () => {
    const o = io();
    const code = await auditVerify(backend({ ok: true, records: 12, head: { seq: 12, hash: "ab" } }), o.io);
    expect(code).toBe(0);
    expect(o.out.join("")).toBe("audit trail holds: 12 records; head 12 ab\n");
  });

  it("verify: 1 when it does not, naming the first bad record (seq, kind, at)", async () => {
    const o = io();
    const report: VerifyReport = {
      ok: false,
      records: 6,
      firstBad: {
        seq: 7,
        problem: "changed",
        kind: "payment.settled",
        at: "2026-03-01T12:00:07.000Z",
        detail: "record 7 does not match its hash",
      },
    };
    expect(await auditVerify(backend(report), o.io)).toBe(1);
    expect(o.out.join("")).toContain(
      "audit trail broken at record 7: changed (payment.settled at 2026-03-01T12:00:07.000Z)",
    );
  });

  it("export: one JSON line per record", async () => {
    const o = io();
    expect(
      await auditExport(backend({ ok: true, records: 0 }, [{ seq: 1 }, { seq: 2 }]), new Date(0), o.io),
    ).toBe(0);
    expect(o.out.join("")).toBe('{"seq":1}\n{"seq":2}\n');
  });

  it("over HTTP: the operator token on each call, the lines read back whole however they arrive", async () => {
    const seen: Array<{ url: string; auth: string | null }> = [];
    const fake = (async (url: URL, init: RequestInit) => {
      seen.push({ url: String(url), auth: new Headers(init.headers).get("authorization") });
      if (String(url).endsWith("/verify")) return Response.json({ ok: true, records: 2 });
      const parts = ['{"seq":1}\n{"se', 'q":2}\n'].map((p) => new TextEncoder().encode(p));
      return new Response(
        new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      );
    }) as unknown as typeof fetch;
    const http = httpAuditBackend({ url: "http://127.0.0.1:1/", token: "tok", fetch: fake });
    expect(await http.verify()).toEqual({ ok: true, records: 2 });
    const got: object[] = [];
    for await (const r of http.export(new Date("2026-03-01T00:00:00Z"))) got.push(r);
    expect(got).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect(seen).toEqual([
      { url: "http://127.0.0.1:1/api/operator/audit/verify", auth: "Bearer tok" },
      { url: "http://127.0.0.1:1/api/operator/audit?since=2026-03-01T00%3A00%3A00.000Z", auth: "Bearer tok" },
    ]);
  });
});
