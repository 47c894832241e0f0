import type { Migration } from "./migration.js";

export const auditTrail: Migration = {
  id: 12,
  name: "the audit trail, hash-chained",
  // One row per money decision or operator action (src/audit, docs/audit.md). `hash` is
  // sha256(prev_hash || canonical), the canonical text computed by the writer (src/audit/canonical.ts)
  // from the row's own columns, so `audit verify` recomputes it from what is stored. `audit_append`
  // takes a batch and chains it after the head under a transaction-scoped advisory lock: appends from
  // several instances take turns and form one chain. UPDATE, DELETE and TRUNCATE are refused by
  // triggers (a hand change must first disable them, and verify then names the record).
  up: (s) => {
    const lock = `x402-audit:${s.replaceAll("'", "''")}`;
    return [
      `CREATE TABLE ${s}.audit_log (
        seq bigint PRIMARY KEY,
        at timestamptz NOT NULL,
        kind text NOT NULL,
        caller text,
        request_id text,
        payment_id text,
        data jsonb NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL
      )`,
      `CREATE INDEX audit_log_at_idx ON ${s}.audit_log (at)`,
      `CREATE INDEX audit_log_kind_seq_idx ON ${s}.audit_log (kind, seq)`,
      `CREATE INDEX audit_log_hash_idx ON ${s}.audit_log (hash)`,
      `CREATE FUNCTION ${s}.audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'the audit trail is append-only';
      END
      $fn$`,
      `CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON ${s}.audit_log
        FOR EACH ROW EXECUTE FUNCTION ${s}.audit_refuse_change()`,
      `CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON ${s}.audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.audit_refuse_change()`,
      // p_entries: [{ at, kind, caller, request_id, payment_id, data, canonical }], in order.
      `CREATE FUNCTION ${s}.audit_append(p_entries jsonb) RETURNS bigint
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_seq bigint;
        v_hash text;
        e jsonb;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('${lock}'));
        SELECT a.seq, a.hash INTO v_seq, v_hash FROM ${s}.audit_log a ORDER BY a.seq DESC LIMIT 1;
        v_seq := coalesce(v_seq, 0);
        v_hash := coalesce(v_hash, repeat('0', 64));
        FOR e IN SELECT value FROM jsonb_array_elements(p_entries) WITH ORDINALITY ORDER BY ordinality LOOP
          v_seq := v_seq + 1;
          INSERT INTO ${s}.audit_log (seq, at, kind, caller, request_id, payment_id, data, prev_hash, hash)
            VALUES (v_seq, (e->>'at')::timestamptz, e->>'kind', e->>'caller', e->>'request_id',
              e->>'payment_id', e->'data', v_hash,
              encode(sha256(convert_to(v_hash || (e->>'canonical'), 'UTF8')), 'hex'))
            RETURNING hash INTO v_hash;
        END LOOP;
        RETURN v_seq;
      END
      $fn$`,
    ];
  },
};
