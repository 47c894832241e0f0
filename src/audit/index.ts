/**
 * The audit trail (docs/audit.md): an append-only, hash-chained record of every money decision and
 * operator action. `AuditLog` queues records off the payment's path and writes them in order, the
 * operator's actions too (`appendControl`), checks the chain (`verify`, verify.ts) and exports it
 * (log.ts); `auditPaymentEvents` turns the payments' events into records (watcher.ts). Storage is a
 * port (port.ts): src/store implements it on PostgreSQL, memory.ts in memory.
 */
import { AuditLog, type AuditLogOptions } from "./log.js";

export { canonicalOf, chainHash, GENESIS } from "./canonical.js";
export {
  type AuditEntry,
  AuditLog,
  type AuditLogOptions,
  type ControlEvent,
  controlEntry,
  type ExportedRecord,
  type Refusal,
} from "./log.js";
export { MemoryAuditStore } from "./memory.js";
export type { AuditRecord, AuditRow, AuditStore } from "./port.js";
export type { FirstBad, Problem, VerifyReport } from "./verify.js";
export { auditPaymentEvents } from "./watcher.js";

/** Open the audit trail on a store (no I/O until the first record is appended or read). */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  return new AuditLog(options);
}
