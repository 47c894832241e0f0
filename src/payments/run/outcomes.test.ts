import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../errors/index.js";
import type { PayInput } from "../../tools/contract.js";
import type { KeyGrant, Ledger } from "../ports/index.js";
import { type PaymentOutcome, REASONS, type Reason } from "../rules/index.js";
import { createToyWorld, type ToyWorld, type ToyWorldOptions, USD } from "../testing/index.js";

/**
 * Every way a payment can end, through the whole pipeline on the memory ledger and the toy chain
 * (unit: no devnet, no network). One row per reason of the closed list (rules/outcome.ts): what
 * the client is told, and whether money moved. A reason added to the list without a row here does
 * not compile.
 */

type World = ToyWorld;

interface Row {
  /** World options (limits, balance, price, a failing ledger). */
  world?: ToyWorldOptions;
  setup?: (w: World) => void;
  /** The wallet asks in its own wallet (no held key), instead of the held key signing. */
  own?: boolean;
  /** The caller's operator key. */
  grant?: KeyGrant;
  input?: Partial<PayInput>;
  deadlineMs?: number;
  /** The request's idempotency claim was lost while it paid. */
  claimLost?: boolean;
  noWallet?: boolean;
  /** A tab token the request names. */
  tab?: string;
  status: PaymentOutcome["status"];
  code: string;
  /** An unclear payment's code once the chain says nothing moved (default `payment_failed`). */
  known?: string;
  /** Whether the toy chain moved the money. */
  moved: boolean;
}

/** A ledger whose `method` fails with `error` (when `when` says so): an outage, a bug. */
const failing =
  (method: keyof Ledger, error: () => unknown, when: (...args: unknown[]) => boolean = () => true) =>
  (memory: Ledger): Ledger =>
    new Proxy(memory, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property !== method) return value.bind(target);
        return (...args: unknown[]) => (when(...args) ? Promise.reject(error()) : value.apply(target, args));
      },
    });

const ROWS: Record<Reason | "no_signer", Row | "never produced" | "pay_quote's own"> = {
  no_wallet: { noWallet: true, status: "refused", code: "payment_unavailable", moved: false },
  origin_not_allowed: {
    world: { limits: { allowedServices: ["https://other.example"] } },
    status: "refused",
    code: "limit_exceeded",
    moved: false,
  },
  target_blocked: {
    setup: (w) => {
      w.service.blocked = true;
    },
    status: "refused",
    code: "payment_unavailable",
    moved: false,
  },
  service_unavailable: {
    setup: (w) => {
      w.service.down = true;
    },
    status: "failed",
    code: "service_unavailable",
    moved: false,
  },
  service_refused: {
    setup: (w) => {
      w.service.refuses = 400;
    },
    status: "refused",
    code: "service_refused",
    moved: false,
  },
  unreadable_demand: {
    setup: (w) => {
      w.service.unreadable = true;
    },
    status: "failed",
    code: "payment_failed",
    moved: false,
  },
  network_not_allowed: {
    setup: (w) => {
      w.service.offer.network = "toy:2";
    },
    status: "refused",
    code: "limit_exceeded",
    moved: false,
  },
  wallet_not_allowed: {
    grant: { name: "ops", wallets: ["0x00000000000000000000000000000000000a11ce"] },
    status: "refused",
    code: "limit_exceeded",
    moved: false,
  },
  no_acceptable_offer: {
    setup: (w) => {
      w.service.offer.asset = "0x00000000000000000000000000000000000b0b00";
    },
    status: "refused",
    code: "payment_unavailable",
    moved: false,
  },
  invalid_max_usd: {
    input: { maxUsd: "lots" },
    status: "refused",
    code: "payment_unavailable",
    moved: false,
  },
  price_changed: { input: { maxUsd: "0.001" }, status: "refused", code: "price_changed", moved: false },
  too_little_time: { deadlineMs: 1_000, status: "refused", code: "deadline_exceeded", moved: false },
  // A black-box review (h30): a retry that took over a lost claim found nothing reserved and ran
  // afresh, while the first attempt, past its probe, still reserved and paid.
  claim_lost: { claimLost: true, status: "refused", code: "idempotency_conflict", moved: false },
  limit_exceeded: {
    world: { price: 2n * USD },
    status: "refused",
    code: "limit_exceeded",
    moved: false,
  },
  insufficient_balance: {
    world: { balance: 5_000n },
    status: "refused",
    code: "insufficient_balance",
    moved: false,
  },
  balance_unreadable: {
    setup: (w) => {
      w.chain.unreadable = true;
    },
    status: "refused",
    code: "payment_failed",
    moved: false,
  },
  wallet_unsupported: {
    own: true,
    setup: (w) => w.chain.cannotPay.add(w.user.address),
    status: "refused",
    code: "payment_unavailable",
    moved: false,
  },
  chain_unreadable: {
    own: true,
    setup: (w) => {
      w.chain.walletChecksDown = true;
    },
    status: "failed",
    code: "payment_failed",
    moved: false,
  },
  signing_failed: {
    setup: (w) => {
      w.chain.signingFails = true;
    },
    status: "failed",
    code: "payment_failed",
    moved: false,
  },
  store_unavailable: {
    world: {
      ledger: failing("reserve", () => new AppError("store_unavailable", "The ledger is down.")),
    },
    status: "failed",
    code: "store_unavailable",
    moved: false,
  },
  internal: {
    world: { ledger: failing("reserve", () => new Error("a bug")) },
    status: "failed",
    code: "internal",
    moved: false,
  },
  no_response: {
    setup: (w) => {
      w.service.after = "silent";
      w.chain.landing = "late";
    },
    status: "unknown",
    code: "payment_unclear",
    moved: false,
  },
  payment_rejected: {
    setup: (w) => {
      w.chain.landing = "refused";
    },
    status: "unknown",
    code: "payment_unclear",
    moved: false,
  },
  // Found by a black-box run (h51): "insufficient" is the service's word, after it was sent the
  // signed payment; a hostile one settled it 12 s later. While unknown it is unclear, as any other.
  rejected_insufficient_funds: {
    setup: (w) => {
      w.chain.landing = "refused";
      w.chain.refusal = "insufficient_funds";
    },
    status: "unknown",
    code: "payment_unclear",
    known: "insufficient_balance",
    moved: false,
  },
  no_settlement_proof: {
    setup: (w) => {
      w.service.after = "no-proof";
      w.chain.landing = "late";
    },
    status: "unknown",
    code: "payment_unclear",
    moved: false,
  },
  service_error_after_payment: {
    setup: (w) => {
      w.service.after = "error";
      w.chain.landing = "late";
    },
    status: "unknown",
    code: "payment_unclear",
    moved: false,
  },
  redirected_after_payment: {
    setup: (w) => {
      w.service.after = "redirect";
      w.chain.landing = "late";
    },
    status: "unknown",
    code: "payment_unclear",
    moved: false,
  },
  settled_undelivered: {
    setup: (w) => {
      w.service.after = "silent";
    },
    status: "paid",
    code: "service_undelivered",
    moved: true,
  },
  outcome_unrecorded: {
    world: {
      ledger: failing(
        "transition",
        () => new AppError("store_unavailable", "The ledger is down."),
        (_id, to) => to === "settled",
      ),
    },
    status: "unknown",
    code: "payment_unclear",
    moved: true,
  },
  payments_paused: {
    world: { pauses: { pausedFor: () => ({ scope: "all", key: null, reason: "incident 42" }) } },
    status: "refused",
    code: "payments_paused",
    moved: false,
  },
  // Found by a review: a key revoked while its chat turn ran still had that turn's payments signed.
  key_ended: {
    world: {
      pauses: { pausedFor: () => undefined, keyEnded: (caller) => (caller === "ci" ? "revoked" : undefined) },
    },
    grant: { name: "ci" },
    status: "refused",
    code: "payment_unavailable",
    moved: false,
  },
  // In the list, but no code path ends a payment with it (a missing key asks the wallet instead).
  no_signer: "never produced",
  // Refusals of a quote id before the pipeline runs (test/payments/quote-id.test.ts, audit.test.ts).
  quote_invalid: "pay_quote's own",
  quote_expired: "pay_quote's own",
  // The toy world keeps no tabs: a token names none this request may use (test/payments/tabs.test.ts
  // has tabs of another caller or wallet, and closed ones).
  tab_unusable: {
    own: true,
    tab: `x4t_${"a".repeat(43)}`,
    status: "refused",
    code: "tab_invalid",
    moved: false,
  },
};

let world: World | undefined;
afterEach(() => {
  world?.close();
  world = undefined;
});

async function pay(
  row: Row,
): Promise<{ w: World; outcome: PaymentOutcome; observer: ReturnType<World["request"]>["observer"] }> {
  const w = createToyWorld(row.world);
  world = w;
  row.setup?.(w);
  const full = w.request({
    ...(row.own ? { wallet: w.user } : {}),
    ...(row.grant ? { caller: row.grant.name, grant: row.grant } : {}),
    ...(row.deadlineMs !== undefined ? { deadline: w.clock.now() + row.deadlineMs } : {}),
    ...(row.tab ? { tab: row.tab } : {}),
    ...(row.claimLost ? { claim: AbortSignal.abort() } : {}),
  });
  const { wallet: _wallet, ...walletless } = full;
  const request = row.noWallet ? walletless : full;
  const outcome = await w.pipeline.pay(request, { url: w.url, ...row.input });
  return { w, outcome, observer: full.observer };
}

const produced = Object.entries(ROWS).filter((e): e is [Reason, Row] => typeof e[1] !== "string");

describe("every reason a payment ends with", () => {
  it("has a row, and every row is a reason of the closed list", () => {
    expect(Object.keys(ROWS).sort()).toEqual(Object.keys(REASONS).sort());
  });

  it.each(produced)("%s", async (reason, row) => {
    const { w, outcome, observer } = await pay(row);
    expect(outcome).toMatchObject({ status: row.status, error: { reason, code: row.code } });
    // The client hears it once, with the same code, and the stream ends where the outcome does.
    expect(observer.errors.map((e) => e.code)).toEqual([row.code]);
    expect(REASONS[reason]).toBe(row.code === "payment_unclear" ? (row.known ?? "payment_failed") : row.code);
    // Money moved only where the row says; never twice.
    expect(w.chain.transactions()).toHaveLength(row.moved ? 1 : 0);
    const rows = await w.memory.listByStatus([
      "reserved",
      "signed",
      "submitted",
      "settled",
      "unknown",
      "failed",
    ]);
    expect(rows.length).toBeLessThanOrEqual(1);
    // What may have gone still counts against the limits; what surely did not, does not.
    const spent = await w.memory.spending(rows[0]?.wallet ?? w.held.address, w.clock.date());
    const mayBeGone = row.status === "unknown" || row.status === "paid";
    expect(spent.today).toBe(mayBeGone && rows.length > 0 ? w.service.offer.price : 0n);
  });

  it("no_signer: a wallet without a usable key is not refused, its own wallet is asked to approve", async () => {
    const { outcome } = await pay({ own: true, status: "awaiting_approval", code: "", moved: false });
    expect(outcome.status).toBe("awaiting_approval");
  });

  it("a pause set while the payment is signed stops it before the reservation: nothing is sent", async () => {
    // The kill switch is read before signing and again before the reservation (docs/deploy.md);
    // here every read after the first says paused, as if the operator paused while it was signed.
    let reads = 0;
    const pauses = {
      pausedFor: () => (reads++ === 0 ? undefined : { scope: "all" as const, key: null, reason: "late" }),
    };
    const { w, outcome } = await pay({ world: { pauses }, status: "refused", code: "", moved: false });
    expect(outcome).toMatchObject({ status: "refused", error: { reason: "payments_paused" } });
    expect(w.chain.transactions()).toHaveLength(0);
    expect(await w.memory.listByStatus(["reserved", "signed", "submitted", "settled", "unknown"])).toEqual(
      [],
    );
  });

  // Found by a black-box run (h48): a reservation that waited on the wallet's lock outlasted the
  // pause's answer, and the payment was sent after it. The switch is read once more when it returns.
  it("a pause seen once the payment is reserved drops it unsent: the row fails, nothing is paid", async () => {
    let reads = 0;
    const pauses = {
      pausedFor: () => (reads++ < 2 ? undefined : { scope: "all" as const, key: null, reason: "late" }),
    };
    const { w, outcome } = await pay({ world: { pauses }, status: "failed", code: "", moved: true });
    expect(outcome).toMatchObject({ status: "failed", error: { reason: "payments_paused" } });
    expect(outcome.error?.message).toContain("The signed payment was not sent; nothing was paid.");
    expect(reads).toBe(3);
    expect(w.chain.transactions()).toHaveLength(0);
    expect((await w.memory.listByStatus(["failed"])).map((r) => r.error)).toEqual(["payments_paused"]);
    expect(await w.memory.listByStatus(["reserved", "signed", "submitted", "settled", "unknown"])).toEqual(
      [],
    );
  });

  it("a pause set once the payment is sent does not stop it: it is settled and recorded", async () => {
    let reads = 0;
    const pauses = {
      pausedFor: () => (reads++ < 3 ? undefined : { scope: "all" as const, key: null, reason: "late" }),
    };
    const { w, outcome } = await pay({ world: { pauses }, status: "paid", code: "", moved: true });
    expect(outcome.status).toBe("paid");
    expect(reads).toBe(3);
    expect(w.chain.transactions()).toHaveLength(1);
    expect((await w.memory.listByStatus(["settled"])).map((r) => r.status)).toEqual(["settled"]);
  });
});
