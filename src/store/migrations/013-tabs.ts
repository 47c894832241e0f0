import type { Migration } from "./migration.js";

/** The statuses whose amount counts against a tab (src/protocol/status.ts: committed). */
const COMMITTED = `('reserved', 'signed', 'submitted', 'settled', 'unknown')`;

export const tabs: Migration = {
  id: 13,
  name: "tabs: a budget the user's wallet funds once",
  // A tab (src/tabs, docs/payments.md#tabs) and the payments made from it (`payments.tab_id`).
  // `reserve_tab_payment` locks the tab's row, then does migration 11's reservation: the tab's
  // committed payments plus this one never exceed what the wallet funded, whatever runs at once,
  // and none is reserved once the tab is closing or when its window would outlast the tab.
  up: (s) => [
    `CREATE TABLE ${s}.tabs (
      tab_id text PRIMARY KEY,
      wallet text NOT NULL,
      network text NOT NULL,
      asset text NOT NULL,
      session text NOT NULL,
      caller text,
      token_hash text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      status text NOT NULL,
      history jsonb NOT NULL,
      opening jsonb,
      funding jsonb,
      funding_tx text,
      refund jsonb,
      refund_tx text,
      refunded numeric(78,0),
      error text,
      sign_by timestamptz NOT NULL,
      ends_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX tabs_status_idx ON ${s}.tabs (status)`,
    `CREATE INDEX tabs_wallet_idx ON ${s}.tabs (wallet, created_at)`,
    `CREATE UNIQUE INDEX tabs_token_idx ON ${s}.tabs (token_hash)`,
    `ALTER TABLE ${s}.payments ADD COLUMN tab_id text`,
    `CREATE INDEX payments_tab_idx ON ${s}.payments (tab_id) WHERE tab_id IS NOT NULL`,
    `CREATE FUNCTION ${s}.tab_committed(p_tab_id text) RETURNS numeric
      LANGUAGE sql STABLE AS $fn$
        SELECT coalesce(sum(amount), 0) FROM ${s}.payments
          WHERE tab_id = p_tab_id AND status IN ${COMMITTED}
      $fn$`,
    `CREATE FUNCTION ${s}.reserve_tab_payment(
        p_tab_id text, p_until timestamptz,
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_caller text,
        p_caller_daily numeric
      ) RETURNS TABLE (outcome text, day_spent text, day_pending text, request_spent text,
        request_pending text, caller_spent text, caller_pending text, tab_left text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        t record;
        r record;
        v_left numeric;
      BEGIN
        SELECT * INTO t FROM ${s}.tabs WHERE tab_id = p_tab_id FOR UPDATE;
        IF NOT FOUND OR t.wallet <> p_wallet OR t.network <> p_network OR t.asset <> p_asset THEN
          RETURN QUERY SELECT 'tab:missing', '0', '0', '0', '0', NULL::text, NULL::text, '0';
          RETURN;
        END IF;
        v_left := greatest(t.amount - ${s}.tab_committed(p_tab_id), 0);
        IF t.status <> 'open' OR t.ends_at <= p_now THEN
          RETURN QUERY SELECT 'tab:closed', '0', '0', '0', '0', NULL::text, NULL::text, v_left::text;
          RETURN;
        END IF;
        IF p_until > t.ends_at THEN
          RETURN QUERY SELECT 'tab:ending', '0', '0', '0', '0', NULL::text, NULL::text, v_left::text;
          RETURN;
        END IF;
        IF p_amount > v_left THEN
          RETURN QUERY SELECT 'tab:short', '0', '0', '0', '0', NULL::text, NULL::text, v_left::text;
          RETURN;
        END IF;
        SELECT * INTO r FROM ${s}.reserve_payment(p_payment_id, p_wallet, p_request_id, p_service,
          p_network, p_asset, p_pay_to, p_amount, p_requirement, p_authorization, p_status,
          p_history, p_now, p_since, p_per_transaction, p_per_request, p_daily, p_caller,
          p_caller_daily);
        IF r.outcome = 'reserved' THEN
          UPDATE ${s}.payments SET tab_id = p_tab_id WHERE payment_id = p_payment_id;
          v_left := v_left - p_amount;
        END IF;
        RETURN QUERY SELECT r.outcome, r.day_spent, r.day_pending, r.request_spent,
          r.request_pending, r.caller_spent, r.caller_pending, v_left::text;
      END
      $fn$`,
  ],
};
