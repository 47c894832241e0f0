import { type AuditLog, createAuditLog } from "./audit/index.js";
import type { Config } from "./config/index.js";
import { type Devnet, SOLANA_SLOT_TIME_MS, startDevnet } from "./devnet/index.js";
import { chainCheck, type ReadinessCheck } from "./http/readiness.js";
import type { Logger } from "./log/index.js";
import { type Observability, timedLedger } from "./observe/index.js";
import {
  ControlPlane,
  OperatorCache,
  type OperatorEvent,
  operatorTokenFor,
  operatorTokenPath,
  PROPAGATION_MS,
} from "./operator/index.js";
import { fanOut, type Payments, type PaymentsOptions } from "./payments/index.js";
import { WalletSignIn } from "./signin/index.js";
import { openStore, type Store } from "./store/index.js";

/*
 * The parts the composition root (bootstrap.ts) assembles a running process from: the store, the
 * embedded devnet, the audit trail, the operator's controls, what watches payments, readiness.
 * Each is built here from configuration; bootstrap.ts decides the order and wires them together.
 */

/** The audit trail on the store (docs/audit.md): its writes' failures are logged, never thrown. */
export function auditLogOf(store: Store, logger: Logger): AuditLog {
  return createAuditLog({
    store: store.audit,
    onError: (error, context) => logger.warn(context, { err: error }),
  });
}

/** The embedded devnet this process runs (its manifest where the options say). */
export function startOwnDevnet(options: { devnetManifest?: string | null }, logger: Logger): Promise<Devnet> {
  return startDevnet({
    ...(options.devnetManifest !== undefined ? { manifestPath: options.devnetManifest } : {}),
    solanaNode: { slotTimeMs: SOLANA_SLOT_TIME_MS },
    log: (line) => logger.info("devnet", { line }),
  });
}

/**
 * The store the configuration names: a PostgreSQL server, else PGlite under DATA_DIR (or in
 * memory). `held` settles once its data directory is this process's (a few ms; at once for
 * PostgreSQL), or the opening failed: the embedded devnet starts only then, so a second process on
 * the directory is refused before its devnet could overwrite the running one's manifest
 * (docs/deploy.md, "One process per DATA_DIR").
 */
export function openStoreOf(
  p: Config["payments"],
  image: Blob | undefined,
): { opening: Promise<Store>; held: Promise<void> } {
  let onHeld = () => {};
  const dirHeld = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const opening = openStore({
    ...(p.databaseUrl ? { databaseUrl: p.databaseUrl } : {}),
    ...(p.databaseSchema ? { schema: p.databaseSchema } : {}),
    dataDir: p.dataDir === "memory://" ? "memory://" : `${p.dataDir}/pglite`,
    ...(image ? { image } : {}),
    onHeld,
  });
  opening.catch(() => {}); // awaited by the caller; not an unhandled rejection meanwhile
  return { opening, held: Promise.race([dirHeld, opening.then(() => {})]) };
}

/** GET /readyz: a primary-key lookup on the ledger (no row), and one RPC call per network. */
export function readinessChecks(store: Store, networks: string[], payments: Payments): ReadinessCheck[] {
  return [
    { name: "store", kind: "store", check: () => store.ledger.get("readyz").then(() => undefined) },
    ...networks.map((network) => chainCheck(network, (signal) => payments.pingChain(network, signal))),
  ];
}

/** Payments awaiting reconciliation: `x402_unclear_payments`. */
export const UNCLEAR = ["unknown", "signed", "submitted"] as const;

/**
 * Payments watched (docs/deploy.md#traces-and-metrics): their events feed the metrics and the
 * traces (beside any watcher already given), their ledger writes are timed.
 */
export function observed(options: PaymentsOptions, observe: Observability): PaymentsOptions {
  const events = options.events ? fanOut(options.events, observe.paymentEvents) : observe.paymentEvents;
  return { ...options, ledger: timedLedger(options.ledger, observe.metrics), events };
}

/**
 * The operator's keys and pauses (docs/deploy.md#operating-it): this instance's copy, read once
 * before the service answers and then every 500 ms; the control plane on the same store; and the
 * operator token (OPERATOR_TOKEN, else one written to `<DATA_DIR>/operator-token`).
 */
export async function operatorControls(
  config: Config,
  store: Store,
  logger: Logger,
  options: { now?: () => Date; onOperatorChange?: (event: OperatorEvent) => void },
  callerNames: Iterable<string>,
  audit: AuditLog,
) {
  const now = options.now;
  const cache = new OperatorCache(store.operator, {
    ...(now ? { now } : {}),
    onError: (error, failures) =>
      logger.warn("operator keys and pauses not refreshed: the last copy holds", { failures, err: error }),
    onRecovered: (failures) => logger.info("operator keys and pauses refreshed again", { failures }),
  });
  await cache.refresh();
  const plane = new ControlPlane({
    store: store.operator,
    callerNames,
    ...(now ? { now } : {}),
    afterChange: () => cache.refresh(),
    // A pause answers once every instance's cache has surely read it.
    propagationMs: PROPAGATION_MS,
    // Every change is an audit record (docs/audit.md) and a log line; never a token.
    onChange: (event) => {
      audit.appendControl(event);
      logger.info("operator change", {
        kind: event.kind,
        by: event.by,
        ...(event.key ? { key: event.key } : {}),
        ...(event.scope ? { scope: event.scope } : {}),
      });
      options.onOperatorChange?.(event);
    },
  });
  // A data dir that cannot be written (a read-only serverless file system) costs the CLI its
  // token file, not the start: the token is then this process's only (set OPERATOR_TOKEN).
  const token = await operatorTokenFor(config.operatorToken, config.payments.dataDir).catch(
    (error: unknown) => {
      logger.warn("operator token not written; set OPERATOR_TOKEN", { err: error });
      return operatorTokenFor(undefined, "memory://");
    },
  );
  return { cache, plane, token };
}

export function operatorBanner(config: Config): string[] {
  if (config.operatorToken) return ["Operator API /api/operator/* (OPERATOR_TOKEN)"];
  if (config.payments.dataDir === "memory://") return [];
  return [`Operator API /api/operator/* (token in ${operatorTokenPath(config.payments.dataDir)})`];
}

/**
 * Signing in with a wallet (src/signin) on the store's nonces and sessions: the message names
 * PUBLIC_URL (or a CORS_ORIGINS page that asks), and an EVM chain with an RPC here judges contract
 * wallets' signatures.
 */
export function walletSignInOf(
  config: Pick<Config, "publicUrl" | "cors">,
  store: Store,
  rpcUrls: Record<string, string>,
  now: (() => Date) | undefined,
): WalletSignIn {
  const { publicUrl } = config;
  const origins = config.cors?.origins ?? [];
  return new WalletSignIn({ publicUrl, origins, store: store.signIn, rpcUrls, ...(now ? { now } : {}) });
}
