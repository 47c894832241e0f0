import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import {
  DAILY_WINDOW_MS,
  DAILY_WINDOW_SLACK_MS,
  type Ledger,
  type LedgerReads,
  PaymentNotFoundError,
  type PaymentRecord,
} from "../../payments/ports/index.js";
import { IllegalTransitionError, LEDGER_STATUSES } from "../../payments/rules/index.js";
import type { Store } from "../index.js";
import { at, HOUR, newWallet, payment, roomy, USD } from "./fixtures.js";

/**
 * Part of the ledger contract (ledger-suite.ts): the running totals a budget check reads stay equal
 * to the sum over the payments, whatever sequence of concurrent steps came before (fast-check).
 */
export function describeLedgerTotals(store: () => Store): void {
  let ledger: Ledger;
  let reads: LedgerReads;
  // The store opens in describeLedger's beforeAll, registered (and so run) before this one.
  beforeAll(() => {
    ledger = store().ledger;
    reads = store().ledger;
  });

  it("keeps what it counts equal to the sum over the payments, after any sequence of concurrent reserves, approvals and moves", async () => {
    const span = 3 * HOUR;
    const command = fc.oneof(
      fc.record({
        kind: fc.constant("reserve" as const),
        request: fc.nat(2),
        amount: fc.bigInt(1n, 4n * USD),
        intent: fc.boolean(),
        tight: fc.boolean(),
        keyed: fc.boolean(),
        at: fc.nat(span),
      }),
      fc.record({
        kind: fc.constant("await" as const),
        request: fc.nat(2),
        amount: fc.bigInt(1n, 4n * USD),
        keyed: fc.boolean(),
        at: fc.nat(span),
      }),
      fc.record({ kind: fc.constant("approve" as const), pick: fc.nat(), tight: fc.boolean() }),
      fc.record({
        kind: fc.constant("move" as const),
        pick: fc.nat(),
        to: fc.constantFrom(...LEDGER_STATUSES),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(command, { minLength: 1, maxLength: 6 }), { maxLength: 6 }),
        async (batches) => {
          const wallet = newWallet();
          // An operator's key (migration 11's totals by caller), or no caller at all.
          const caller = `key_${randomUUID()}`;
          const requests = [0, 1, 2].map(() => `req_${randomUUID()}`);
          const ids: string[] = [];
          const tight = {
            perTransaction: 4n * USD,
            perRequest: 6n * USD,
            daily: 10n * USD,
            callerDaily: 8n * USD,
          };
          for (const batch of batches) {
            const known = [...ids];
            const run = async (c: (typeof batch)[number]): Promise<unknown> => {
              if (c.kind === "reserve" || c.kind === "await") {
                const input = payment({
                  wallet,
                  scopeId: requests[c.request] ?? "",
                  amount: c.amount,
                  now: at(c.at),
                  caller: c.keyed ? caller : null,
                  ...(c.kind === "reserve" && c.tight ? { limits: tight } : {}),
                  ...(c.kind === "reserve" && c.intent
                    ? { intent: { authorization: { nonce: "0x01" } } }
                    : {}),
                });
                ids.push(input.paymentId);
                if (c.kind === "reserve") return ledger.reserve(input);
                const { limits: _limits, caller: asker, ...facts } = input;
                return ledger.recordAwaiting({
                  ...facts,
                  caller: asker ?? null,
                  approval: {},
                  expiresAt: at(span + HOUR),
                });
              }
              const id = known[c.pick % Math.max(known.length, 1)];
              if (!id) return undefined;
              if (c.kind === "approve") {
                return ledger.approve({
                  paymentId: id,
                  limits: c.tight ? tight : roomy,
                  authorization: {},
                  now: at(span),
                });
              }
              return ledger.transition(id, c.to, {}, at(span));
            };
            const outcomes = await Promise.allSettled(batch.map(run));
            for (const o of outcomes) {
              if (
                o.status === "rejected" &&
                !(o.reason instanceof IllegalTransitionError || o.reason instanceof PaymentNotFoundError)
              )
                throw o.reason;
            }
          }
          // The rows as the ledger holds them, summed here by status (state.ts decides what counts).
          const rows = (await Promise.all(ids.map((id) => ledger.get(id)))).filter((r) => r !== undefined);
          const sum = (keep: (r: PaymentRecord) => boolean, statuses: readonly string[]) =>
            rows.filter((r) => keep(r) && statuses.includes(r.status)).reduce((t, r) => t + r.amount, 0n);
          const pending = ["reserved", "signed", "submitted"];
          const spent = ["settled", "unknown"];
          const inDay = (since: number) => (r: PaymentRecord) => r.createdAt.getTime() > since;
          for (const scopeId of requests) {
            const ofRequest = (r: PaymentRecord) => r.scopeId === scopeId;
            // Every row within the day: exactly the sums.
            const now = at(span + HOUR);
            expect(await ledger.budget(wallet, scopeId, now)).toEqual({
              daySpent: sum(inDay(-Infinity), spent),
              dayPending: sum(inDay(-Infinity), pending),
              requestSpent: sum(ofRequest, spent),
              requestPending: sum(ofRequest, pending),
            });
            // The day's edge among the rows: at least the rows after it, at most those within the slack.
            const later = at(24 * HOUR + span / 2);
            const since = later.getTime() - DAILY_WINDOW_MS;
            const edge = await ledger.budget(wallet, scopeId, later);
            for (const [field, statuses] of [
              ["daySpent", spent],
              ["dayPending", pending],
            ] as const) {
              expect(edge[field]).toBeGreaterThanOrEqual(sum(inDay(since), statuses));
              expect(edge[field]).toBeLessThanOrEqual(sum(inDay(since - DAILY_WINDOW_SLACK_MS), statuses));
            }
            expect(edge.requestSpent).toBe(sum(ofRequest, spent));
            expect(edge.requestPending).toBe(sum(ofRequest, pending));
          }
          // The key's day over its payments (every one of them here, all in the day).
          const byKey = (r: PaymentRecord) => r.caller === caller;
          expect(await ledger.budget(wallet, requests[0] ?? "", at(span + HOUR), caller)).toMatchObject({
            callerSpent: sum(byKey, spent),
            callerPending: sum(byKey, pending),
          });
          expect(await reads.spending(wallet, at(span + HOUR))).toEqual({
            settled: sum(inDay(-Infinity), ["settled"]),
            pending: sum(inDay(-Infinity), pending),
            unknown: sum(inDay(-Infinity), ["unknown"]),
            today: sum(inDay(-Infinity), [...pending, ...spent]),
          });
        },
      ),
      { numRuns: 15 },
    );
  });
}
