import { describe, expect, it } from "vitest";
import { AppError } from "../../errors/index.js";
import type { SafeResponse } from "../../outbound/index.js";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../protocol/index.js";
import { MemoryLedger } from "../../store/memory/index.js";
import type { PaymentRecord } from "../ports/index.js";
import { type AmountLimits, canTransition, type Requirement } from "../rules/index.js";
import { Clock, RecordingObserver, USD } from "../testing/index.js";
import { createReconciler, PaymentRun } from "./index.js";

/**
 * `PaymentRun` on the memory ledger (unit): every step it can take, one journey per row, with the
 * statuses the client is streamed and the history the ledger keeps. Together the journeys (and the
 * reconciler's own moves) take every transition of the state machine (rules/state.ts) that the
 * payment core can take; the few it never takes are named, and checked to stay untaken.
 */

const limits: AmountLimits = { perTransaction: 5n * USD, perRequest: 5n * USD, daily: 10n * USD };
const requirement: Requirement = {
  scheme: "exact",
  network: "toy:1",
  amount: "1000000",
  asset: "0xasset",
  payTo: "0xpayee",
  maxTimeoutSeconds: 60,
};
const response = (status: number): SafeResponse => ({
  status,
  headers: new Headers(),
  url: "https://toy.example/",
  body: new Uint8Array(),
  truncated: false,
  method: "GET",
});
const unclear = {
  reason: "no_response" as const,
  message: "No answer.",
  detail: "no response after sending",
};
const sign = { kind: "solana-transaction" as const, method: "signTransaction" as const, transaction: "AA==" };

interface Ctx {
  ledger: MemoryLedger;
  clock: Clock;
  observer: RecordingObserver;
  run: PaymentRun;
  /** The same payment taken up again from its row (a later request answering an approval). */
  resume(): Promise<PaymentRun>;
  row(): Promise<PaymentRecord | undefined>;
}

let ids = 0;
function context(amount = USD): Ctx {
  const ledger = new MemoryLedger();
  const clock = new Clock();
  const observer = new RecordingObserver();
  ids += 1;
  const facts = {
    paymentId: `pay_${ids}`,
    scopeId: `req_${ids}`,
    wallet: `0xwallet_${ids}`,
    service: "https://toy.example/",
    network: "toy:1",
    asset: "0xasset",
    payTo: "0xpayee",
    amount,
  };
  const run = new PaymentRun(ledger, observer, facts, clock.date);
  const row = () => ledger.get(facts.paymentId);
  const resume = async () => {
    const record = await row();
    if (!record) throw new Error("no row");
    return PaymentRun.resume(ledger, observer, record, clock.date);
  };
  return { ledger, clock, observer, run, resume, row };
}

const intent = (run: PaymentRun, over: Partial<AmountLimits> = {}) =>
  run.reserveAndRecordIntent({
    requirement,
    limits: { ...limits, ...over },
    authorization: { nonce: "0x01" },
  });
const waitForWallet = (run: PaymentRun, clock: Clock) =>
  run.awaitApproval({
    requirement,
    caller: null,
    stored: { sign },
    sign,
    expiresAt: new Date(clock.now() + 60_000),
  });
const settledRow = (c: Ctx) =>
  c.ledger.transition(c.run.paymentId, "settled", { txHash: "0xfeed", payer: "0xwallet" }, c.clock.date());

interface Journey {
  name: string;
  act(c: Ctx): Promise<unknown>;
  /** The statuses streamed, in order. */
  streamed: PaymentStatus[];
  /** The ledger row's history, or null when no row may exist. */
  history: PaymentStatus[] | null;
  /** The codes of the errors the client is told (`e:`), once each. */
  errors?: string[];
}

const JOURNEYS: Journey[] = [
  {
    name: "refused at the quote: nothing recorded",
    act: async (c) => c.run.refuse("price_changed", "The price changed."),
    streamed: ["quoted", "refused"],
    history: null,
    errors: ["price_changed"],
  },
  {
    name: "a limit refuses the reservation: nothing recorded",
    act: async (c) => {
      const refusal = await intent(c.run, { daily: 0n });
      expect(refusal).toMatchObject({ ok: false, limit: "daily" });
      return c.run.refuse("limit_exceeded", "Over the daily limit.");
    },
    streamed: ["quoted", "refused"],
    history: null,
    errors: ["limit_exceeded"],
  },
  {
    name: "fails before anything was recorded",
    act: async (c) => c.run.fail("signing_failed", "Could not sign."),
    streamed: ["quoted", "failed"],
    history: null,
    errors: ["payment_failed"],
  },
  {
    name: "a step throws before anything was recorded: failed, nothing paid",
    act: async (c) => c.run.crashed(new Error("boom")),
    streamed: ["quoted", "failed"],
    history: null,
    errors: ["internal"],
  },
  {
    name: "reserved with its intent, sent, settled",
    act: async (c) => {
      await intent(c.run);
      return c.run.settled({ transaction: "0xfeed", payer: "0xwallet" }, response(200));
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "settled"],
    history: ["reserved", "signed", "submitted", "settled"],
  },
  {
    name: "fails after its intent was recorded (the service refused before paying)",
    act: async (c) => {
      await intent(c.run);
      return c.run.fail("payment_rejected", "Refused.");
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "failed"],
    history: ["reserved", "signed", "submitted", "failed"],
    errors: ["payment_failed"],
  },
  {
    name: "a step throws after its intent was recorded: unknown, still counted",
    act: async (c) => {
      await intent(c.run);
      return c.run.crashed(new AppError("store_unavailable", "down"));
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "unknown"],
    history: ["reserved", "signed", "submitted"],
    errors: ["payment_unclear"],
  },
  {
    name: "unclear after sending, and the chain does not know yet",
    act: async (c) => {
      await intent(c.run);
      await c.run.unclear(unclear);
      return c.run.finishUnclear(unclear, await c.row());
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "unknown"],
    history: ["reserved", "signed", "submitted", "unknown"],
    errors: ["payment_unclear"],
  },
  {
    name: "unclear after sending, and the chain says it landed",
    act: async (c) => {
      await intent(c.run);
      await c.run.unclear(unclear);
      await settledRow(c);
      return c.run.finishUnclear(unclear, await c.row());
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "settled"],
    history: ["reserved", "signed", "submitted", "unknown", "settled"],
    errors: ["service_undelivered"],
  },
  {
    name: "unclear after sending, and the chain says it never will",
    act: async (c) => {
      await intent(c.run);
      await c.run.unclear(unclear);
      await c.ledger.transition(c.run.paymentId, "failed", { error: "expired unused" }, c.clock.date());
      return c.run.finishUnclear(unclear, await c.row());
    },
    streamed: ["quoted", "reserved", "signed", "submitted", "failed"],
    history: ["reserved", "signed", "submitted", "unknown", "failed"],
    errors: ["payment_failed"],
  },
  {
    name: "waits for the wallet, which approves",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      const resumed = await c.resume();
      expect(await resumed.approve({ limits, authorization: { nonce: "0x01" } })).toBeUndefined();
      return resumed.settled({ transaction: "0xfeed" }, response(200));
    },
    streamed: ["quoted", "awaiting_approval", "reserved", "signed", "submitted", "settled"],
    history: ["awaiting_approval", "reserved", "signed", "submitted", "settled"],
  },
  {
    name: "waits for the wallet; approving finds the limit used meanwhile: it keeps waiting",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      const refusal = await (await c.resume()).approve({
        limits: { ...limits, perTransaction: 0n },
        authorization: {},
      });
      expect(refusal).toMatchObject({ ok: false, limit: "perTransaction" });
    },
    streamed: ["quoted", "awaiting_approval"],
    history: ["awaiting_approval"],
  },
  {
    name: "waits for the wallet, which declines",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      return (await c.resume()).reject();
    },
    streamed: ["quoted", "awaiting_approval", "rejected"],
    history: ["awaiting_approval", "rejected"],
  },
  {
    name: "waits for the wallet, too long",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      return (await c.resume()).expire();
    },
    streamed: ["quoted", "awaiting_approval", "expired"],
    history: ["awaiting_approval", "expired"],
  },
  {
    name: "waits for the wallet, and the service's terms change",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      return (await c.resume()).termsChanged("The price changed.");
    },
    streamed: ["quoted", "awaiting_approval", "failed"],
    history: ["awaiting_approval", "failed"],
  },
];

/** The reconciler's own moves, on rows a dead attempt left: the rest of the machine. */
const SWEEPS: Journey[] = [
  {
    name: "reserved by an attempt that died before signing: released",
    act: async (c) => {
      const { serviceName: _s, caller: _c, ...facts } = c.run.facts;
      await c.ledger.reserve({ ...facts, requirement, limits, now: c.clock.date() });
      c.clock.advance(60_000);
      await sweep(c);
    },
    streamed: [],
    history: ["reserved", "released"],
  },
  {
    name: "signed by an attempt that died (an older process's row): unknown, then what the chain says",
    act: async (c) => {
      const { serviceName: _s, caller: _c, ...facts } = c.run.facts;
      await c.ledger.reserve({ ...facts, requirement, limits, now: c.clock.date() });
      await c.ledger.transition(c.run.paymentId, "signed", {}, c.clock.date());
      c.clock.advance(60_000);
      await sweep(c, { status: "settled", txHash: "0xfeed", payer: "0xwallet" });
    },
    streamed: [],
    history: ["reserved", "signed", "unknown", "settled"],
  },
  {
    name: "submitted by an attempt that died: unknown, then failed when the chain says so",
    act: async (c) => {
      await intent(c.run);
      c.clock.advance(60_000);
      await sweep(c, { status: "failed", error: "expired unused" });
    },
    streamed: ["quoted", "reserved", "signed", "submitted"],
    history: ["reserved", "signed", "submitted", "unknown", "failed"],
  },
  {
    name: "awaiting an approval past its window: expired",
    act: async (c) => {
      await waitForWallet(c.run, c.clock);
      c.clock.advance(60_000);
      await sweep(c);
    },
    streamed: ["quoted", "awaiting_approval"],
    history: ["awaiting_approval", "expired"],
  },
];

type Verdict = Awaited<ReturnType<Parameters<typeof createReconciler>[0]["chains"]["resolve"]>>;
function sweep(c: Ctx, verdict: Verdict = { status: "pending" }) {
  const errors: unknown[] = [];
  const reconciler = createReconciler({
    ledger: c.ledger,
    chains: { resolve: async () => verdict },
    staleMs: 30_000,
    now: c.clock.date,
    onError: (e) => void errors.push(e),
  });
  return reconciler.sweep().then((result) => {
    expect(errors).toEqual([]);
    return result;
  });
}

const pairs = (statuses: readonly string[]) => statuses.slice(1).map((to, i) => `${statuses[i]}->${to}`);

describe("PaymentRun, step by step", () => {
  it.each([...JOURNEYS, ...SWEEPS].map((j) => [j.name, j] as const))("%s", async (_name, journey) => {
    const c = context();
    await journey.act(c);
    const streamed = c.observer.statuses();
    expect(streamed).toEqual(journey.streamed);
    // The turn's summary follows the stream, step for step.
    expect(c.observer.summaries.map((s) => s.status)).toEqual(streamed.filter((s) => s !== "quoted"));
    const row = await c.row();
    expect(row?.history.map((h) => h.status) ?? null).toEqual(journey.history);
    expect(c.observer.errors.map((e) => e.code)).toEqual(journey.errors ?? []);
  });

  it("counts what may be gone, and frees what surely is not", async () => {
    const cases: Array<[Journey, bigint]> = [
      [JOURNEYS[4] as Journey, USD], // settled
      [JOURNEYS[5] as Journey, 0n], // failed after its intent
      [JOURNEYS[6] as Journey, USD], // crashed after its intent: still pending
      [JOURNEYS[7] as Journey, USD], // unknown
      [JOURNEYS[9] as Journey, 0n], // unclear, then failed
      [JOURNEYS[12] as Journey, 0n], // declined
    ];
    for (const [journey, counted] of cases) {
      const c = context();
      await journey.act(c);
      expect((await c.ledger.spending(c.run.facts.wallet, c.clock.date())).today, journey.name).toBe(counted);
    }
  });
});

/** Allowed by the state machine, never taken by the payment core (only kept as ways out). */
const UNTAKEN = ["reserved->failed", "signed->failed"];

describe("the state machine, as the payment core walks it", () => {
  it("takes every allowed step in some journey, but the ones named untaken, and no other", async () => {
    const seen = new Set<string>();
    for (const journey of [...JOURNEYS, ...SWEEPS]) {
      const c = context();
      await journey.act(c);
      const history = (await c.row())?.history.map((h) => h.status) ?? [];
      for (const step of [...pairs(c.observer.statuses()), ...pairs(history)]) seen.add(step);
    }
    const allowed = PAYMENT_STATUSES.flatMap((from) =>
      PAYMENT_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect([...seen].filter((step) => !allowed.includes(step))).toEqual([]);
    expect(allowed.filter((step) => !seen.has(step)).sort()).toEqual([...UNTAKEN].sort());
  });
});

describe("two processes' reconcilers on the same rows", () => {
  /*
   * Found by a black-box outage run: after a restart both instances swept the same stale rows,
   * and the one that lost each race logged `illegal payment transition` as an error (a bug, by
   * docs/payments.md), though every row ended right.
   */
  it("the one that finds a row already moved goes on from where it stands, and reports nothing", async () => {
    const c = context();
    await intent(c.run);
    c.clock.advance(60_000);
    const errors: unknown[] = [];
    const other = createReconciler({
      ledger: c.ledger,
      chains: { resolve: async () => ({ status: "settled", txHash: "0xfeed", payer: "0xwallet" }) },
      staleMs: 30_000,
      now: c.clock.date,
    });
    // This process lists the stale row; the other resolves it before this one moves it.
    const racing = new Proxy(c.ledger, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property !== "listByStatus") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: Parameters<typeof target.listByStatus>) => {
          // Copies, as a database returns them (the memory ledger's rows are live objects).
          const rows = structuredClone(await target.listByStatus(...args));
          if (args[0].includes("submitted")) await other.sweep();
          return rows;
        };
      },
    });
    const mine = createReconciler({
      ledger: racing,
      chains: { resolve: async () => ({ status: "settled", txHash: "0xfeed", payer: "0xwallet" }) },
      staleMs: 30_000,
      now: c.clock.date,
      onError: (e) => void errors.push(e),
    });
    expect(await mine.sweep()).toEqual({ resolved: 1, unresolved: 0 });
    expect(errors).toEqual([]);
    expect((await c.row())?.history.map((h) => h.status)).toEqual([
      "reserved",
      "signed",
      "submitted",
      "unknown",
      "settled",
    ]);
  });
});
