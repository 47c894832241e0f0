import type { Migration } from "./migration.js";

export const approvalInWallet: Migration = {
  id: 3,
  name: "approval in the user's wallet",
  // A payment can wait for the user's wallet (docs/payments.md, "Approval"): it is stored with
  // what the wallet signs, the caller it belongs to and when it expires, and holds no budget
  // (`awaiting_approval` is not among the spent statuses). Approving it is one call of
  // `approve_payment`: the same locks and sums as `reserve_payment`, then the row moves to
  // `submitted` with its intent, only if it is still awaiting approval.
  up: (s) => [
    `ALTER TABLE ${s}.payments DROP CONSTRAINT IF EXISTS payments_status_check`,
    `ALTER TABLE ${s}.payments ADD CONSTRAINT payments_status_check CHECK (status IN (
        'reserved', 'signed', 'submitted', 'settled', 'failed', 'unknown', 'released',
        'awaiting_approval', 'rejected', 'expired'))`,
    `ALTER TABLE ${s}.payments ADD COLUMN approval jsonb`,
    `ALTER TABLE ${s}.payments ADD COLUMN caller text`,
    `ALTER TABLE ${s}.payments ADD COLUMN expires_at timestamptz`,
    `CREATE FUNCTION ${s}.approve_payment(
        p_payment_id text, p_authorization jsonb, p_history jsonb, p_now timestamptz,
        p_since timestamptz, p_per_transaction numeric, p_per_request numeric, p_daily numeric,
        p_spent text[]
      ) RETURNS TABLE (outcome text, today text, this_request text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_wallet text;
        v_request_id text;
        v_amount numeric;
        v_status text;
        v_expires timestamptz;
        v_today numeric;
        v_request numeric;
      BEGIN
        SELECT p.wallet INTO v_wallet FROM ${s}.payments p WHERE p.payment_id = p_payment_id;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'missing', '0', '0';
          RETURN;
        END IF;
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (v_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT p.status, p.request_id, p.amount, p.expires_at
          INTO v_status, v_request_id, v_amount, v_expires
          FROM ${s}.payments p WHERE p.payment_id = p_payment_id FOR UPDATE;
        IF v_status <> 'awaiting_approval' THEN
          RETURN QUERY SELECT 'status:' || v_status, '0', '0';
          RETURN;
        END IF;
        IF v_expires IS NOT NULL AND v_expires <= p_now THEN
          RETURN QUERY SELECT 'status:expired', '0', '0';
          RETURN;
        END IF;
        SELECT coalesce(sum(p.amount) FILTER (WHERE p.wallet = v_wallet AND p.created_at > p_since), 0),
               coalesce(sum(p.amount) FILTER (WHERE p.request_id = v_request_id), 0)
          INTO v_today, v_request
          FROM ${s}.payments p
          WHERE ((p.wallet = v_wallet AND p.created_at > p_since) OR p.request_id = v_request_id)
            AND p.status = ANY (p_spent);
        IF v_amount > greatest(p_per_transaction, 0)
           OR v_amount > greatest(p_per_request - v_request, 0)
           OR v_amount > greatest(p_daily - v_today, 0) THEN
          RETURN QUERY SELECT 'refused', v_today::text, v_request::text;
          RETURN;
        END IF;
        UPDATE ${s}.payments SET status = 'submitted', history = history || p_history,
            authorization_data = p_authorization, updated_at = p_now
          WHERE payment_id = p_payment_id;
        RETURN QUERY SELECT 'reserved', v_today::text, v_request::text;
      END
      $fn$`,
  ],
};
