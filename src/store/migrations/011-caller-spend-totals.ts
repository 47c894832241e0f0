import type { Migration } from "./migration.js";

export const callerSpendTotals: Migration = {
  id: 11,
  name: "caller spend totals",
  // An operator's key's daily cap counts everything its caller committed in the rolling 24 h over
  // every wallet it pays from (docs/deploy.md#operating-it, docs/payments.md#spending-limits). As migration 6
  // does per wallet: running totals per caller and 5-minute bucket of the payment's `created_at`,
  // kept by triggers on `payments` in the same transaction as every write of a row (this
  // version's functions, older processes' and the reconciler's alike), counting what migration 6
  // counts; and a `caller_budgets` row per caller whose lock serializes the checks of one caller.
  //
  // Lock order, fixed so no two transactions wait on each other: the wallet's budget row, THEN the
  // caller's budget row, then the payment row, then the totals (the wallet's bucket and request
  // row by migration 6's triggers, then the caller's bucket by these, which fire after them: a
  // trigger's name orders it among one event's). Only a reservation or approval with a caller cap
  // takes the caller's lock; every payment of a key carries its cap, so two of them at once, on
  // one wallet or two, are checked one after the other and can never together pass it.
  up: (s) => [
    ...callerTables(s),
    ...keepCallerTotals(s),
    ...callerTotalsOfExistingPayments(s),
    ...readCallerSpend(s),
    ...reserveWithCallerCap(s),
    ...approveWithCallerCap(s),
  ],
};

function callerTables(s: string): string[] {
  return [
    // No payment is written while the totals are built (writers wait for the commit).
    `LOCK TABLE ${s}.payments IN SHARE ROW EXCLUSIVE MODE`,
    `CREATE TABLE ${s}.caller_budgets (
        caller text PRIMARY KEY,
        created_at timestamptz NOT NULL
      )`,
    `CREATE TABLE ${s}.caller_spend_buckets (
        caller text NOT NULL,
        bucket timestamptz NOT NULL,
        pending numeric(78,0) NOT NULL,
        settled numeric(78,0) NOT NULL,
        unknown numeric(78,0) NOT NULL,
        PRIMARY KEY (caller, bucket)
      )`,
    `CREATE FUNCTION ${s}.add_caller_spend(p_caller text, p_at timestamptz, p_pending numeric,
        p_settled numeric, p_unknown numeric) RETURNS void
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        IF p_caller IS NULL OR (p_pending = 0 AND p_settled = 0 AND p_unknown = 0) THEN
          RETURN;
        END IF;
        INSERT INTO ${s}.caller_spend_buckets AS b (caller, bucket, pending, settled, unknown)
          VALUES (p_caller, ${s}.spend_bucket(p_at), p_pending, p_settled, p_unknown)
          ON CONFLICT (caller, bucket) DO UPDATE SET pending = b.pending + excluded.pending,
            settled = b.settled + excluded.settled, unknown = b.unknown + excluded.unknown;
      END
      $fn$`,
  ];
}

function keepCallerTotals(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.payment_caller_spend_totals() RETURNS trigger
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
        IF TG_OP = 'UPDATE' AND OLD.caller IS NOT DISTINCT FROM NEW.caller
           AND ${s}.spend_bucket(OLD.created_at) = ${s}.spend_bucket(NEW.created_at) THEN
          PERFORM ${s}.add_caller_spend(NEW.caller, NEW.created_at,
            n_pending - o_pending, n_settled - o_settled, n_unknown - o_unknown);
        ELSE
          IF TG_OP <> 'INSERT' THEN
            PERFORM ${s}.add_caller_spend(OLD.caller, OLD.created_at, -o_pending, -o_settled, -o_unknown);
          END IF;
          IF TG_OP <> 'DELETE' THEN
            PERFORM ${s}.add_caller_spend(NEW.caller, NEW.created_at, n_pending, n_settled, n_unknown);
          END IF;
        END IF;
        RETURN NULL;
      END
      $fn$`,
    // Named to fire after migration 6's triggers of the same event (the lock order above). A row
    // without a caller, or one awaiting approval, adds nothing.
    `CREATE TRIGGER payments_spend_insert_z_caller AFTER INSERT ON ${s}.payments FOR EACH ROW
        WHEN (NEW.caller IS NOT NULL
          AND NEW.status IN ('reserved', 'signed', 'submitted', 'settled', 'unknown'))
        EXECUTE FUNCTION ${s}.payment_caller_spend_totals()`,
    `CREATE TRIGGER payments_spend_update_z_caller AFTER UPDATE ON ${s}.payments FOR EACH ROW
        WHEN ((OLD.caller IS NOT NULL OR NEW.caller IS NOT NULL)
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount
            OR OLD.caller IS DISTINCT FROM NEW.caller OR OLD.created_at IS DISTINCT FROM NEW.created_at))
        EXECUTE FUNCTION ${s}.payment_caller_spend_totals()`,
    `CREATE TRIGGER payments_spend_delete_z_caller AFTER DELETE ON ${s}.payments FOR EACH ROW
        WHEN (OLD.caller IS NOT NULL)
        EXECUTE FUNCTION ${s}.payment_caller_spend_totals()`,
  ];
}

function callerTotalsOfExistingPayments(s: string): string[] {
  return [
    `INSERT INTO ${s}.caller_spend_buckets (caller, bucket, pending, settled, unknown)
        SELECT p.caller, ${s}.spend_bucket(p.created_at),
          coalesce(sum(p.amount) FILTER (WHERE p.status IN ('reserved', 'signed', 'submitted')), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'settled'), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.status = 'unknown'), 0)
        FROM ${s}.payments p
        WHERE p.caller IS NOT NULL
          AND p.status IN ('reserved', 'signed', 'submitted', 'settled', 'unknown')
        GROUP BY 1, 2`,
  ];
}

// A caller's day over every wallet (every bucket reaching past p_since, as `read_spend` reads a
// wallet's): at most 289 bucket rows, however many payments there are.
function readCallerSpend(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.read_caller_spend(p_caller text, p_since timestamptz)
      RETURNS TABLE (pending numeric, settled numeric, unknown numeric)
      LANGUAGE sql STABLE AS $fn$
        SELECT coalesce(sum(b.pending), 0), coalesce(sum(b.settled), 0), coalesce(sum(b.unknown), 0)
        FROM ${s}.caller_spend_buckets b
        WHERE b.caller = p_caller AND b.bucket > p_since - interval '5 minutes'
      $fn$`,
  ];
}

// The caller's lock (after the wallet's) and day, when a caller cap applies; zeros otherwise.
function lockCaller(s: string, caller: string): string {
  return `IF ${caller} IS NOT NULL AND p_caller_daily IS NOT NULL THEN
          INSERT INTO ${s}.caller_budgets (caller, created_at) VALUES (${caller}, p_now)
            ON CONFLICT (caller) DO UPDATE SET caller = excluded.caller;
          SELECT * INTO c FROM ${s}.read_caller_spend(${caller}, p_since);
        ELSE
          SELECT NULL::numeric AS pending, NULL::numeric AS settled, NULL::numeric AS unknown INTO c;
        END IF;`;
}

// Whether an amount passes the caller's cap (true when none applies).
const withinCallerCap = (amount: string) =>
  `(c.pending IS NULL OR ${amount} <= greatest(p_caller_daily - c.settled - c.unknown - c.pending, 0))`;

// Migration 6's reserve on the totals, with the caller's cap: one more argument, two more sums
// (NULL when no cap applied). A new overload; the old ones stay for processes of earlier versions.
// It has as many arguments as migration 4's (and this approve as migration 3's): every version's
// ledger has called these functions with typed arguments, which is what tells them apart.
function reserveWithCallerCap(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_caller text,
        p_caller_daily numeric
      ) RETURNS TABLE (outcome text, day_spent text, day_pending text, request_spent text,
        request_pending text, caller_spent text, caller_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v record;
        c record;
        v_outcome text := 'reserved';
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        ${lockCaller(s, "p_caller")}
        SELECT * INTO v FROM ${s}.read_spend(p_wallet, p_request_id, p_since);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v.request_spent - v.request_pending, 0)
           OR p_amount > greatest(p_daily - v.day_settled - v.day_unknown - v.day_pending, 0)
           OR NOT ${withinCallerCap("p_amount")} THEN
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
          v.request_spent::text, v.request_pending::text, (c.settled + c.unknown)::text,
          c.pending::text;
      END
      $fn$`,
  ];
}

// Migration 6's approve with the caller's cap, counted by the row's caller (who asked for it).
function approveWithCallerCap(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.approve_payment(
        p_payment_id text, p_authorization jsonb, p_history jsonb, p_now timestamptz,
        p_since timestamptz, p_per_transaction numeric, p_per_request numeric, p_daily numeric,
        p_caller_daily numeric
      ) RETURNS TABLE (outcome text, amount text, day_spent text, day_pending text,
        request_spent text, request_pending text, caller_spent text, caller_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_wallet text;
        v_caller text;
        v_request_id text;
        v_amount numeric;
        v_status text;
        v_expires timestamptz;
        v record;
        c record;
      BEGIN
        SELECT p.wallet, p.caller INTO v_wallet, v_caller
          FROM ${s}.payments p WHERE p.payment_id = p_payment_id;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'missing', '0', '0', '0', '0', '0', NULL::text, NULL::text;
          RETURN;
        END IF;
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (v_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        ${lockCaller(s, "v_caller")}
        SELECT p.status, p.request_id, p.amount, p.expires_at
          INTO v_status, v_request_id, v_amount, v_expires
          FROM ${s}.payments p WHERE p.payment_id = p_payment_id FOR UPDATE;
        IF v_status <> 'awaiting_approval' THEN
          RETURN QUERY SELECT 'status:' || v_status, v_amount::text, '0', '0', '0', '0',
            NULL::text, NULL::text;
          RETURN;
        END IF;
        IF v_expires IS NOT NULL AND v_expires <= p_now THEN
          RETURN QUERY SELECT 'status:expired', v_amount::text, '0', '0', '0', '0',
            NULL::text, NULL::text;
          RETURN;
        END IF;
        SELECT * INTO v FROM ${s}.read_spend(v_wallet, v_request_id, p_since);
        IF v_amount > greatest(p_per_transaction, 0)
           OR v_amount > greatest(p_per_request - v.request_spent - v.request_pending, 0)
           OR v_amount > greatest(p_daily - v.day_settled - v.day_unknown - v.day_pending, 0)
           OR NOT ${withinCallerCap("v_amount")} THEN
          RETURN QUERY SELECT 'refused', v_amount::text, (v.day_settled + v.day_unknown)::text,
            v.day_pending::text, v.request_spent::text, v.request_pending::text,
            (c.settled + c.unknown)::text, c.pending::text;
          RETURN;
        END IF;
        UPDATE ${s}.payments SET status = 'submitted', history = history || p_history,
            authorization_data = p_authorization, updated_at = p_now
          WHERE payment_id = p_payment_id;
        RETURN QUERY SELECT 'reserved', v_amount::text, (v.day_settled + v.day_unknown)::text,
          v.day_pending::text, v.request_spent::text, v.request_pending::text,
          (c.settled + c.unknown)::text, c.pending::text;
      END
      $fn$`,
  ];
}
