import type { Migration } from "./migration.js";

export const runningSpendTotals: Migration = {
  id: 6,
  name: "running spend totals",
  // What a wallet and a request have committed, kept as running totals instead of summed over
  // their payments on every check (docs/payments.md, "Running totals"), so a check costs the same
  // at 10 or 100,000 payments. Self-contained: its own tables, functions and triggers.
  //
  // What counts is what counted before (src/protocol/status.ts, `isCommitted`): `reserved`,
  // `signed` and `submitted` as pending; `settled` and `unknown` as spent; `failed`, `released`,
  // `awaiting_approval`, `rejected` and `expired` not at all. Per wallet, the totals are kept per
  // 5-minute bucket of the payment's `created_at` (`spend_bucket`); the daily window reads every
  // bucket that reaches into it, so the bucket straddling its edge counts whole: a payment counts
  // for at least 24 h and at most 5 min more, never less (the stricter side). Per request, one
  // row. Triggers on `payments` keep both in the same transaction as every write of a row
  // (reservations, approvals, moves, the reconciler's, and older processes' functions alike), so
  // a reservation holding the wallet's lock reads totals as committed with their rows. Rows are
  // locked wallet budget, payment, bucket, request row, always in that order.
  up: (s) => [
    ...totalsTables(s),
    ...addSpend(s),
    ...keepTotals(s),
    ...totalsOfExistingPayments(s),
    ...readSpend(s),
    ...reserveOnTotals(s),
    ...approveOnTotals(s),
    ...moveWithFlush(s),
  ],
};

function totalsTables(s: string): string[] {
  return [
    // No payment is written while the totals are built (writers wait for the commit).
    `LOCK TABLE ${s}.payments IN SHARE ROW EXCLUSIVE MODE`,
    `CREATE TABLE ${s}.wallet_spend_buckets (
        wallet text NOT NULL,
        bucket timestamptz NOT NULL,
        pending numeric(78,0) NOT NULL,
        settled numeric(78,0) NOT NULL,
        unknown numeric(78,0) NOT NULL,
        PRIMARY KEY (wallet, bucket)
      )`,
    `CREATE TABLE ${s}.request_spend (
        request_id text PRIMARY KEY,
        pending numeric(78,0) NOT NULL,
        settled numeric(78,0) NOT NULL,
        unknown numeric(78,0) NOT NULL
      )`,
    `CREATE FUNCTION ${s}.spend_bucket(p_at timestamptz) RETURNS timestamptz
      LANGUAGE sql IMMUTABLE AS $fn$
        SELECT date_bin(interval '5 minutes', p_at, timestamptz '2000-01-01 00:00:00+00')
      $fn$`,
  ];
}

// Add to one wallet bucket and one request row (negative amounts take away).
function addSpend(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.add_spend(p_wallet text, p_request_id text, p_at timestamptz,
        p_pending numeric, p_settled numeric, p_unknown numeric) RETURNS void
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        IF p_pending = 0 AND p_settled = 0 AND p_unknown = 0 THEN
          RETURN;
        END IF;
        INSERT INTO ${s}.wallet_spend_buckets AS b (wallet, bucket, pending, settled, unknown)
          VALUES (p_wallet, ${s}.spend_bucket(p_at), p_pending, p_settled, p_unknown)
          ON CONFLICT (wallet, bucket) DO UPDATE SET pending = b.pending + excluded.pending,
            settled = b.settled + excluded.settled, unknown = b.unknown + excluded.unknown;
        INSERT INTO ${s}.request_spend AS r (request_id, pending, settled, unknown)
          VALUES (p_request_id, p_pending, p_settled, p_unknown)
          ON CONFLICT (request_id) DO UPDATE SET pending = r.pending + excluded.pending,
            settled = r.settled + excluded.settled, unknown = r.unknown + excluded.unknown;
      END
      $fn$`,
  ];
}

function keepTotals(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.payment_spend_totals() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      DECLARE
        o_pending numeric := 0;
        o_settled numeric := 0;
        o_unknown numeric := 0;
        n_pending numeric := 0;
        n_settled numeric := 0;
        n_unknown numeric := 0;
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          CASE OLD.status
            WHEN 'reserved', 'signed', 'submitted' THEN o_pending := OLD.amount;
            WHEN 'settled' THEN o_settled := OLD.amount;
            WHEN 'unknown' THEN o_unknown := OLD.amount;
            ELSE NULL;
          END CASE;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          CASE NEW.status
            WHEN 'reserved', 'signed', 'submitted' THEN n_pending := NEW.amount;
            WHEN 'settled' THEN n_settled := NEW.amount;
            WHEN 'unknown' THEN n_unknown := NEW.amount;
            ELSE NULL;
          END CASE;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.wallet = NEW.wallet AND OLD.request_id = NEW.request_id
           AND ${s}.spend_bucket(OLD.created_at) = ${s}.spend_bucket(NEW.created_at) THEN
          PERFORM ${s}.add_spend(NEW.wallet, NEW.request_id, NEW.created_at,
            n_pending - o_pending, n_settled - o_settled, n_unknown - o_unknown);
        ELSE
          IF TG_OP <> 'INSERT' THEN
            PERFORM ${s}.add_spend(OLD.wallet, OLD.request_id, OLD.created_at,
              -o_pending, -o_settled, -o_unknown);
          END IF;
          IF TG_OP <> 'DELETE' THEN
            PERFORM ${s}.add_spend(NEW.wallet, NEW.request_id, NEW.created_at,
              n_pending, n_settled, n_unknown);
          END IF;
        END IF;
        RETURN NULL;
      END
      $fn$`,
    // A row awaiting approval adds nothing; an update that touches none of the counted facts
    // (history, tx hash, ...) does not run the function.
    `CREATE TRIGGER payments_spend_insert AFTER INSERT ON ${s}.payments FOR EACH ROW
        WHEN (NEW.status IN ('reserved', 'signed', 'submitted', 'settled', 'unknown'))
        EXECUTE FUNCTION ${s}.payment_spend_totals()`,
    `CREATE TRIGGER payments_spend_update AFTER UPDATE ON ${s}.payments FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount
          OR OLD.wallet IS DISTINCT FROM NEW.wallet OR OLD.request_id IS DISTINCT FROM NEW.request_id
          OR OLD.created_at IS DISTINCT FROM NEW.created_at)
        EXECUTE FUNCTION ${s}.payment_spend_totals()`,
    `CREATE TRIGGER payments_spend_delete AFTER DELETE ON ${s}.payments FOR EACH ROW
        EXECUTE FUNCTION ${s}.payment_spend_totals()`,
  ];
}

// The totals of the payments already there.
function totalsOfExistingPayments(s: string): string[] {
  return [
    `INSERT INTO ${s}.wallet_spend_buckets (wallet, bucket, pending, settled, unknown)
        SELECT p.wallet, ${s}.spend_bucket(p.created_at),
          coalesce(sum(p.amount) FILTER (WHERE p.status IN ('reserved', 'signed', 'submitted')), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'settled'), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'unknown'), 0)
        FROM ${s}.payments p
        WHERE p.status IN ('reserved', 'signed', 'submitted', 'settled', 'unknown')
        GROUP BY 1, 2`,
    `INSERT INTO ${s}.request_spend (request_id, pending, settled, unknown)
        SELECT p.request_id,
          coalesce(sum(p.amount) FILTER (WHERE p.status IN ('reserved', 'signed', 'submitted')), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'settled'), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'unknown'), 0)
        FROM ${s}.payments p
        WHERE p.status IN ('reserved', 'signed', 'submitted', 'settled', 'unknown')
        GROUP BY 1`,
  ];
}

// A wallet's day (every bucket reaching past p_since) and a request, from the totals alone:
// at most 289 bucket rows and one request row, however many payments there are.
function readSpend(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.read_spend(p_wallet text, p_request_id text, p_since timestamptz)
      RETURNS TABLE (day_pending numeric, day_settled numeric, day_unknown numeric,
        request_pending numeric, request_spent numeric)
      LANGUAGE sql STABLE AS $fn$
        SELECT d.pending, d.settled, d.unknown, coalesce(r.pending, 0),
          coalesce(r.settled + r.unknown, 0)
        FROM (SELECT coalesce(sum(b.pending), 0) AS pending, coalesce(sum(b.settled), 0) AS settled,
                coalesce(sum(b.unknown), 0) AS unknown
              FROM ${s}.wallet_spend_buckets b
              WHERE b.wallet = p_wallet AND b.bucket > p_since - interval '5 minutes') d
          LEFT JOIN ${s}.request_spend r ON r.request_id = p_request_id
      $fn$`,
  ];
}

// reserve_payment and approve_payment on the totals: migration 5's reserve (with the caller) and
// migration 3's approve, same locks and rule, without the status lists (the triggers hold them). New
// overloads; the old ones stay for processes of earlier versions (they sum the rows, which
// the totals equal, and take the same wallet lock).
function reserveOnTotals(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_caller text
      ) RETURNS TABLE (outcome text, day_spent text, day_pending text, request_spent text,
        request_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v record;
        v_outcome text := 'reserved';
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT * INTO v FROM ${s}.read_spend(p_wallet, p_request_id, p_since);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v.request_spent - v.request_pending, 0)
           OR p_amount > greatest(p_daily - v.day_settled - v.day_unknown - v.day_pending, 0) THEN
          v_outcome := 'refused';
        ELSE
          INSERT INTO ${s}.payments (payment_id, status, history, wallet, request_id, service,
              network, asset, pay_to, amount, requirement, authorization_data, caller, created_at,
              updated_at)
            VALUES (p_payment_id, p_status, p_history, p_wallet, p_request_id, p_service, p_network,
              p_asset, p_pay_to, p_amount, p_requirement, p_authorization, p_caller, p_now, p_now)
            ON CONFLICT (payment_id) DO NOTHING;
          IF NOT FOUND THEN
            v_outcome := 'duplicate';
          END IF;
        END IF;
        RETURN QUERY SELECT v_outcome, (v.day_settled + v.day_unknown)::text, v.day_pending::text,
          v.request_spent::text, v.request_pending::text;
      END
      $fn$`,
  ];
}

// migration 3's approve on the totals (reserveOnTotals says why).
function approveOnTotals(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.approve_payment(
        p_payment_id text, p_authorization jsonb, p_history jsonb, p_now timestamptz,
        p_since timestamptz, p_per_transaction numeric, p_per_request numeric, p_daily numeric
      ) RETURNS TABLE (outcome text, amount text, day_spent text, day_pending text,
        request_spent text, request_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_wallet text;
        v_request_id text;
        v_amount numeric;
        v_status text;
        v_expires timestamptz;
        v record;
      BEGIN
        SELECT p.wallet INTO v_wallet FROM ${s}.payments p WHERE p.payment_id = p_payment_id;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'missing', '0', '0', '0', '0', '0';
          RETURN;
        END IF;
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (v_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT p.status, p.request_id, p.amount, p.expires_at
          INTO v_status, v_request_id, v_amount, v_expires
          FROM ${s}.payments p WHERE p.payment_id = p_payment_id FOR UPDATE;
        IF v_status <> 'awaiting_approval' THEN
          RETURN QUERY SELECT 'status:' || v_status, v_amount::text, '0', '0', '0', '0';
          RETURN;
        END IF;
        IF v_expires IS NOT NULL AND v_expires <= p_now THEN
          RETURN QUERY SELECT 'status:expired', v_amount::text, '0', '0', '0', '0';
          RETURN;
        END IF;
        SELECT * INTO v FROM ${s}.read_spend(v_wallet, v_request_id, p_since);
        IF v_amount > greatest(p_per_transaction, 0)
           OR v_amount > greatest(p_per_request - v.request_spent - v.request_pending, 0)
           OR v_amount > greatest(p_daily - v.day_settled - v.day_unknown - v.day_pending, 0) THEN
          RETURN QUERY SELECT 'refused', v_amount::text, (v.day_settled + v.day_unknown)::text,
            v.day_pending::text, v.request_spent::text, v.request_pending::text;
          RETURN;
        END IF;
        UPDATE ${s}.payments SET status = 'submitted', history = history || p_history,
            authorization_data = p_authorization, updated_at = p_now
          WHERE payment_id = p_payment_id;
        RETURN QUERY SELECT 'reserved', v_amount::text, (v.day_settled + v.day_unknown)::text,
          v.day_pending::text, v.request_spent::text, v.request_pending::text;
      END
      $fn$`,
  ];
}

// Migration 4's move, and whether its commit waits for the write-ahead log to reach the disk.
// A move to `settled` does not (docs/benchmarks.md, "Paid path"): should the database
// server itself crash in the fraction of a second before the log is flushed, the row is
// back at `submitted` with its intent, still counting as spent, and the reconciler settles
// it from the chain; a crash of this service loses nothing either way. Every other move
// (and the reservation with its intent) is flushed before the call returns.
function moveWithFlush(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.move_payment(
        p_payment_id text, p_to text, p_from text[], p_entry jsonb, p_tx_hash text, p_payer text,
        p_error text, p_authorization jsonb, p_now timestamptz, p_flush boolean
      ) RETURNS text
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        IF NOT p_flush THEN
          PERFORM set_config('synchronous_commit', 'off', true);
        END IF;
        RETURN ${s}.move_payment(p_payment_id, p_to, p_from, p_entry, p_tx_hash, p_payer, p_error,
          p_authorization, p_now);
      END
      $fn$`,
  ];
}
