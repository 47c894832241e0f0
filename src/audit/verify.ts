import { canonicalOf, chainHash, GENESIS } from "./canonical.js";
import type { AuditRecord, AuditStore } from "./port.js";

/**
 * Checking the chain (docs/audit.md#verify), record by record in seq order, from the first:
 *  - changed: the stored hash is not sha256(prev_hash || canonical) of the record as stored (its
 *    data, kind, caller, time, ids or prev_hash were edited);
 *  - removed: a seq is missing, or a record's prev_hash is the hash of no record at all (the one
 *    it followed is gone, and the later ones were renumbered);
 *  - reordered: a record is intact and its seq in place, but its prev_hash is the hash of another
 *    record that is still there, not of the one before it (records moved, or their seqs swapped).
 * Removing the newest records leaves a shorter chain that holds: compare `head` with one noted
 * before (an export, a log line) to see that.
 */

export type Problem = "changed" | "removed" | "reordered";

export interface FirstBad {
  /** The seq where the chain breaks: the changed or out-of-place record's, or the missing one's. */
  seq: number;
  problem: Problem;
  /** The record found at that place (for `removed`, the one that follows the gap). */
  kind: string;
  at: string;
  detail: string;
}

export type VerifyReport =
  | { ok: true; records: number; head?: { seq: number; hash: string } }
  /** `records`: how many records held before the first bad one. */
  | { ok: false; records: number; firstBad: FirstBad };

const PAGE = 1000;

const named = (r: AuditRecord) => `record ${r.seq} (${r.kind} at ${r.at.toISOString()})`;

async function check(
  store: AuditStore,
  record: AuditRecord,
  prev: AuditRecord | undefined,
): Promise<FirstBad | undefined> {
  const found = { kind: record.kind, at: record.at.toISOString() };
  if (record.subMs) {
    const detail = `${named(record)} has a time edited within its millisecond (${record.subMs} µs past it)`;
    return { seq: record.seq, problem: "changed", ...found, detail };
  }
  if (chainHash(record.prevHash, canonicalOf(record)) !== record.hash) {
    return {
      seq: record.seq,
      problem: "changed",
      ...found,
      detail: `${named(record)} does not match its hash`,
    };
  }
  const seq = (prev?.seq ?? 0) + 1;
  if (record.seq !== seq) {
    const detail = `record ${seq} is missing: ${named(record)} comes after ${prev ? `record ${prev.seq}` : "nothing"}`;
    return { seq, problem: "removed", ...found, detail };
  }
  if (record.prevHash === (prev?.hash ?? GENESIS)) return undefined;
  const followed = record.prevHash === GENESIS ? 0 : await store.seqOfHash(record.prevHash);
  if (followed === undefined) {
    const detail = `the record before ${named(record)} is missing (the later ones were renumbered)`;
    return { seq: record.seq, problem: "removed", ...found, detail };
  }
  const after = followed === 0 ? "was the first record" : `followed record ${followed}`;
  return {
    seq: record.seq,
    problem: "reordered",
    ...found,
    detail: `${named(record)} ${after}, not record ${prev?.seq ?? 0}`,
  };
}

/** Walk the whole chain; stop at the first record that breaks it. */
export async function verifyChain(store: AuditStore): Promise<VerifyReport> {
  let prev: AuditRecord | undefined;
  let records = 0;
  for (;;) {
    const page = await store.read({ after: prev?.seq ?? 0, limit: PAGE });
    for (const record of page) {
      const bad = await check(store, record, prev);
      if (bad) return { ok: false, records, firstBad: bad };
      records++;
      prev = record;
    }
    if (page.length < PAGE) break;
  }
  return { ok: true, records, ...(prev ? { head: { seq: prev.seq, hash: prev.hash } } : {}) };
}
