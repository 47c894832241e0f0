import type { Migration } from "./migration.js";

export const callerOfEveryPayment: Migration = {
  id: 5,
  name: "the caller of every payment",
  // GET /api/payments/:id answers a payment's own caller only (docs/protocol.md), so a payment
  // signed by a server key records the bearer identity of the request that made it, in the same
  // insert as its reservation (migration 3 recorded it for payments awaiting approval only).
  // `reserve_payment` gains an overload with the caller; the older ones stay for processes of
  // the previous versions still running against this database.
  up: (s) => [
    `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_spent text[],
        p_pending text[], p_caller text
      ) RETURNS TABLE (outcome text, day_spent text, day_pending text, request_spent text,
        request_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_day_spent numeric;
        v_day_pending numeric;
        v_request_spent numeric;
        v_request_pending numeric;
        v_outcome text := 'reserved';
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT
          coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since
            AND NOT p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since
            AND p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id
            AND NOT p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id
            AND p.status = ANY (p_pending)), 0)
          INTO v_day_spent, v_day_pending, v_request_spent, v_request_pending
          FROM ${s}.payments p
          WHERE ((p.wallet = p_wallet AND p.created_at > p_since) OR p.request_id = p_request_id)
            AND p.status = ANY (p_spent);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v_request_spent - v_request_pending, 0)
           OR p_amount > greatest(p_daily - v_day_spent - v_day_pending, 0) THEN
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
        RETURN QUERY SELECT v_outcome, v_day_spent::text, v_day_pending::text,
          v_request_spent::text, v_request_pending::text;
      END
      $fn$`,
  ],
};
