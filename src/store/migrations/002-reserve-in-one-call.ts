import type { Migration } from "./migration.js";

export const reserveInOneCall: Migration = {
  id: 2,
  name: "reserve in one call",
  // Check-and-reserve as one function call: one round trip instead of five statements. Each
  // statement of a VOLATILE plpgsql function takes a new snapshot, so the sums are read after the
  // wallet's budget row is locked and see every reservation committed before (READ COMMITTED).
  // The rule is checkSpend's (src/payments/rules/limits.ts), remaining amounts clamped at zero; the
  // ledger suite holds the two to the same answers.
  up: (s) => [
    `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_spent text[]
      ) RETURNS TABLE (outcome text, today text, this_request text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_today numeric;
        v_request numeric;
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since), 0),
               coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id), 0)
          INTO v_today, v_request
          FROM ${s}.payments p
          WHERE ((p.wallet = p_wallet AND p.created_at > p_since) OR p.request_id = p_request_id)
            AND p.status = ANY (p_spent);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v_request, 0)
           OR p_amount > greatest(p_daily - v_today, 0) THEN
          RETURN QUERY SELECT 'refused', v_today::text, v_request::text;
          RETURN;
        END IF;
        INSERT INTO ${s}.payments (payment_id, status, history, wallet, request_id, service, network,
            asset, pay_to, amount, requirement, authorization_data, created_at, updated_at)
          VALUES (p_payment_id, p_status, p_history, p_wallet, p_request_id, p_service, p_network,
            p_asset, p_pay_to, p_amount, p_requirement, p_authorization, p_now, p_now)
          ON CONFLICT (payment_id) DO NOTHING;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'duplicate', v_today::text, v_request::text;
          RETURN;
        END IF;
        RETURN QUERY SELECT 'reserved', v_today::text, v_request::text;
      END
      $fn$`,
  ],
};
