import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type AuditStore, MemoryAuditStore } from "../audit/index.js";
import type { OperatorStore } from "../operator/index.js";
import type {
  DeliveredData,
  Ledger,
  LedgerReads,
  PaymentHistory,
  TabStore,
} from "../payments/ports/index.js";
import { MemorySignInStore, type SignInStore } from "../signin/index.js";
import { PgAuditStore } from "./audit.js";
import { PgDeliveredData } from "./delivered.js";
import { holdDataDir } from "./dir-lock.js";
import { guardStore } from "./errors.js";
import { PgPaymentHistory } from "./history.js";
import { type IdempotencyStore, PgIdempotencyStore } from "./idempotency.js";
import { PgLedger } from "./ledger.js";
import type { DriverQuery } from "./ledger-calls.js";
import { MemoryDeliveredData, MemoryIdempotencyStore, MemoryLedger } from "./memory/index.js";
import { type Db, migrate, quoteIdent } from "./migrate.js";
import { MemoryOperatorStore, PgOperatorStore } from "./operator.js";
import { PgSignInStore } from "./signin.js";
import { PgTabStore } from "./tabs.js";
import { pgliteTemplateImage, prepareDataDir } from "./template.js";

/**
 * The store: the ledger on PostgreSQL. Embedded PGlite by default, so a fresh machine needs no
 * database server; a real PostgreSQL server when `databaseUrl` is set. Migrations run on open.
 * The ledger it hands out is guarded (src/store/errors.ts): a database that cannot be reached is
 * AppError `store_unavailable`, and no driver error (with its SQL and parameters) goes further.
 */

export interface StoreOptions {
  /** postgres://... : use this server. Absent: embedded PGlite. */
  databaseUrl?: string;
  /** PGlite data directory (persisted); "memory://" keeps it in memory. Default ".data/pglite". */
  dataDir?: string;
  /** Postgres schema holding the tables, e.g. one per test file. Default "public". */
  schema?: string;
  /**
   * An in-memory database ("memory://") starts as this image (PGlite's `dumpDataDir`, e.g. of an
   * already migrated database: src/store/testing/image.ts) instead of by initdb: about 0.4 s
   * instead of 1.5-2.5 s per open, which tests that boot many services pay many times. Without
   * one it starts as the template's image (src/store/template.ts) when `npm install` made it.
   */
  image?: Blob;
  /**
   * Called once the data directory is this process's (dir-lock.ts), before the database opens; at
   * once for PostgreSQL and memory. The service starts its devnet only then: a second process on
   * the directory is refused before it writes anything (bootstrap.ts).
   */
  onHeld?: () => void;
  /**
   * How long a read from a PostgreSQL server may wait for its answer before it is
   * `store_unavailable` (errors.ts, `guardStore`). Default READ_WITHIN_MS; tests set it short.
   */
  readWithinMs?: number;
}

export interface Store {
  /** "memory": src/store/memory, the same contract kept in this process only (tests). */
  kind: "pglite" | "postgres" | "memory";
  /** The ledger port, and its read side for audits and tests (`LedgerReads`), guarded. */
  ledger: Ledger & LedgerReads;
  /** A caller's payments for people (GET /api/payments), guarded the same way. */
  history: PaymentHistory;
  /** Outcomes of requests sent with an Idempotency-Key (the HTTP layer's port), guarded the same way. */
  idempotency: IdempotencyStore;
  /** What payments approved on the approval page delivered, for their callers (24 h), guarded the same way. */
  delivered: DeliveredData;
  /** Operator keys and pauses (docs/deploy.md#operating-it), guarded the same way. */
  operator: OperatorStore;
  /** The audit trail's records (migration 12; src/audit reads and writes them), guarded the same way. */
  audit: AuditStore;
  /** Tabs (migration 13), guarded the same way; absent in memory (tabs need PostgreSQL's locks). */
  tabs?: TabStore;
  /** Wallet sign-ins' nonces and sessions (migration 14; src/signin), guarded the same way. */
  signIn: SignInStore;
  close(): Promise<void>;
}

export { DataDirInUse } from "./dir-lock.js";
export { guardStore, isStoreUnavailable, READ_WITHIN_MS, toStoreError } from "./errors.js";

export const DEFAULT_DATA_DIR = ".data/pglite";

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Open the store, creating or upgrading its schema. Close it when done (PGlite holds its directory). */
export async function openStore(options: StoreOptions = {}): Promise<Store> {
  const schema = options.schema ?? "public";
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name: ${schema}`);

  if (options.databaseUrl) {
    options.onHeld?.();
    const client = postgres(options.databaseUrl, {
      max: 10,
      // A server that does not answer is reported as unavailable in seconds, not after 30 s, and
      // while it is down a query waits at most 2 s for the next connection attempt (not 20 s).
      connect_timeout: 10,
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 2),
      onnotice: () => {},
      // Unqualified table names resolve in the store's schema on every pooled connection.
      connection: { search_path: quoteIdent(schema), application_name: "x402-chat-agent" },
    });
    const db: Db = drizzlePostgres(client);
    try {
      await migrate(db, schema);
    } catch (error) {
      await client.end({ timeout: 5 });
      throw error;
    }
    // Every read on a request's path gives up when the server stops answering (a frozen
    // connection never fails): the ledger's budget read is in every quote, the sign-in session's
    // in every request that carries one. Writes wait for their answer (errors.ts, `guardStore`).
    const within = options.readWithinMs;
    const reading = <T extends object>(store: T, reads: readonly (keyof T & string)[]) =>
      guardStore(store, { reads, ...(within !== undefined ? { readWithinMs: within } : {}) });
    return {
      kind: "postgres",
      ledger: reading(new PgLedger(db, postgresQuery(client), { lazySettle: true }), [
        "get",
        "listByStatus",
        "listByScope",
        "budget",
        "spending",
      ]),
      history: reading(new PgPaymentHistory(db), ["listHistory"]),
      idempotency: guardStore(new PgIdempotencyStore(db)),
      delivered: reading(new PgDeliveredData(db), ["read"]),
      operator: reading(new PgOperatorStore(postgresQuery(client)), [
        "listKeys",
        "listPauses",
        "payments",
        "committedSince",
      ]),
      audit: reading(new PgAuditStore(postgresQuery(client)), ["read", "latest", "seqOfHash"]),
      tabs: reading(new PgTabStore(db), [
        "get",
        "findServing",
        "usage",
        "listByWallet",
        "listByStatus",
        "listUnchecked",
      ]),
      signIn: reading(new PgSignInStore(postgresQuery(client)), ["session"]),
      close: () => client.end({ timeout: 5 }),
    };
  }

  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  const onDisk = !dataDir.startsWith("memory://");
  // One process at a time in the directory (dir-lock.ts), held until the store closes.
  if (onDisk) await mkdir(dirname(resolve(dataDir)), { recursive: true });
  const lock = onDisk ? await holdDataDir(dataDir) : undefined;
  options.onHeld?.();
  const opened = await openPglite(dataDir, schema, options.image).catch(async (error: unknown) => {
    await lock?.release();
    throw error;
  });
  return { ...opened, close: () => opened.close().finally(() => lock?.release()) };
}

/** PGlite in `dataDir` (or memory), migrated, as the store. */
async function openPglite(dataDir: string, schema: string, callerImage: Blob | undefined): Promise<Store> {
  // A new directory starts as a copy of an initialised one when there is one (src/store/template.ts).
  if (!dataDir.startsWith("memory://")) await prepareDataDir(dataDir);
  // An in-memory database starts from an image when there is one: the caller's, else the template's.
  const image = dataDir.startsWith("memory://") ? (callerImage ?? (await pgliteTemplateImage())) : undefined;
  const client = image ? new PGlite(dataDir, { loadDataDir: image }) : new PGlite(dataDir);
  try {
    await client.exec(`SET search_path TO ${quoteIdent(schema)}`);
    const db: Db = drizzlePglite(client);
    await migrate(db, schema);
    if (!dataDir.startsWith("memory://")) await lapseLeftClaims(client, schema);
    return {
      kind: "pglite",
      ledger: guardStore(new PgLedger(db, pgliteQuery(client))),
      history: guardStore(new PgPaymentHistory(db)),
      idempotency: guardStore(new PgIdempotencyStore(db)),
      delivered: guardStore(new PgDeliveredData(db)),
      operator: guardStore(new PgOperatorStore(pgliteQuery(client))),
      audit: guardStore(new PgAuditStore(pgliteQuery(client))),
      tabs: guardStore(new PgTabStore(db)),
      signIn: guardStore(new PgSignInStore(pgliteQuery(client))),
      close: () => client.close(),
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/**
 * On a directory this process holds (dir-lock.ts) no other process runs an attempt, so a claim
 * still in progress was left by one that died: its lease lapses now (no lease counts as lapsed,
 * idempotency.ts), and a retry sent right after the restart is answered from the ledger instead of
 * with 409 until IDEMPOTENCY_LEASE_MS has passed (docs/protocol.md, "After a crash").
 */
async function lapseLeftClaims(client: PGlite, schema: string): Promise<void> {
  await client.exec(
    `UPDATE ${quoteIdent(schema)}.idempotency_keys SET lease_until = NULL WHERE state = 'in-progress'`,
  );
}

/**
 * The store in this process's memory (src/store/memory): the same contract, for tests of the
 * payment core that need no database. Nothing is kept after the process ends; `close` frees nothing.
 */
export function openMemoryStore(): Store {
  const ledger = new MemoryLedger();
  return {
    kind: "memory",
    ledger,
    history: ledger,
    idempotency: new MemoryIdempotencyStore(),
    delivered: new MemoryDeliveredData(),
    operator: new MemoryOperatorStore(ledger),
    audit: new MemoryAuditStore(),
    signIn: new MemorySignInStore(),
    close: async () => {},
  };
}

/**
 * The ledger's hot queries on postgres.js (a pooled connection, parameters as given), as named
 * prepared statements: `unsafe` alone sends every call with parameters as two round trips (parse
 * and describe, then bind and execute). Prepared, a connection parses a statement once and each
 * later call is one round trip. Every text passed here is one of a fixed set (no values in it), so
 * a connection holds a bounded number of statements.
 */
export function postgresQuery(client: postgres.Sql): DriverQuery {
  return (text, params) =>
    client.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
}

/** The ledger's hot queries on PGlite. */
export function pgliteQuery(client: PGlite): DriverQuery {
  return async (text, params) => (await client.query<Record<string, unknown>>(text, [...params])).rows;
}
