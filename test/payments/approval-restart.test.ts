/**
 * Approval in the user's wallet across a restart: the paid call outlives the process that made
 * it. Run against the real devnet in process (two services on one PGlite data dir).
 * Tests whose comment says PROBLEM reproduced a problem found here, since fixed (see each); the
 * others pin the safe behaviour. One of the approval-* attack files, one per attacker;
 * the shared set-up is test/payments/approval-attack.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  devnet,
  evmUser,
  gate,
  models,
  proxy,
  resumeBody,
  signEvm,
  useApprovalAttack,
} from "./approval-attack.js";
import { awaiting, boot, evmBalances, ledgerOf, poll, priceOf, readChat } from "./harness.js";

useApprovalAttack({ boot: false });

describe("a restart between the approval and the settlement", () => {
  it("the paid call outlives the process: after the restart the payment is settled from the chain, counted once, never re-sent", async () => {
    const dir = await mkdtemp(join(tmpdir(), "approval-adv-"));
    const env = { ALLOW_PRIVATE_ORIGINS: proxy.url, SHUTDOWN_GRACE_MS: "200", SERVICE_TIMEOUT_MS: "2000" };
    try {
      proxy.reset();
      const price = priceOf(devnet, "weather");
      const a = await boot(devnet, { store: "pglite", dataDir: dir, models: models.registry, env });
      const message = models.script("restart", [
        [
          {
            toolName: "pay_and_fetch",
            input: { url: `${proxy.url}${proxy.path}`, method: "GET", query: { city: "Paris" } },
          },
        ],
      ]);
      const first = await readChat(
        await a.running.service.app.request("/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ messages: [{ role: "user", content: message }], walletAddress: evmUser }),
        }),
      );
      const ask = awaiting(first);
      const signature = await signEvm(ask);
      // The service takes the paid call, keeps it past the service timeout and the shutdown, then settles.
      // It is let go once the first process is closed and its stream has ended (not after a fixed 3 s).
      const arrived = gate();
      const released = gate();
      proxy.onPaid = async () => {
        arrived.open();
        await released.promise;
        return "forward";
      };
      const before = await evmBalances(devnet, "user");
      const body = resumeBody(evmUser, { paymentId: ask.paymentId, signature }, {}, message);
      const response = await a.running.service.app.request("/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const streamed = response.text();
      await arrived.promise;
      await a.close();
      await streamed;
      released.open();
      // Let the held call reach the real service and settle.
      await poll(
        async () => (before.payer - (await evmBalances(devnet, "user")).payer === price ? true : undefined),
        15_000,
        "the settlement on chain",
      );
      const b = await boot(devnet, { store: "pglite", dataDir: dir, models: models.registry, env });
      try {
        const ledgerB = ledgerOf(b.running);
        const row = await ledgerB.get(ask.paymentId);
        expect(["submitted", "unknown", "settled"]).toContain(row?.status);
        await b.running.payments?.reconciler.resolve(ask.paymentId);
        expect((await ledgerB.get(ask.paymentId))?.status).toBe("settled");
        expect((await ledgerB.spending(evmUser, new Date())).today).toBeGreaterThanOrEqual(price);
        // The same answer after the restart: replayed or refused, never sent again.
        const again = await b.running.service.app.request("/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect([200, 400]).toContain(again.status);
        if (again.status === 200) expect(again.headers.get("idempotent-replayed")).toBe("true");
        await again.text();
        expect(proxy.paid).toBe(1);
        expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
      } finally {
        await b.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
