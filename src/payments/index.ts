import { readFile } from "node:fs/promises";
import { z } from "zod/v4";
import { createChains, type SignerKey, signerKeySchema } from "../chains/index.js";
import { createDiscovery } from "../discovery/index.js";
import { createSafeFetch } from "../outbound/index.js";
import { createPaymentsFace, decodeCursor, PageApprovals } from "./face/index.js";
import type { PaymentsFace } from "./face.js";
import type { DeliveredData, Ledger, PaymentEvents, PaymentHistory, PaymentPauses } from "./ports/index.js";
import { createSignerRegistry } from "./ports/index.js";
import {
  ApprovalDesk,
  BalanceBook,
  createReconciler,
  PaymentPipeline,
  type PipelineConfig,
  type Reconciler,
} from "./run/index.js";
import { createTabs, type TabDesk, type TabKeeper, type TabsOptions } from "./tabs/index.js";

/**
 * The payments capability's one door: detect x402, quote, enforce limits, pay, record, all through
 * the face (face.ts). `createPayments` wires its parts (no I/O); the composition root opens the
 * store and passes its ledger and the configuration, then calls `start()`. What else others may
 * use of payments is re-exported at the end of this file; nothing outside src/payments (but
 * src/store, which implements its ports) imports its rooms (biome.json).
 */
export interface PaymentsOptions extends PipelineConfig {
  /** The payment ledger (src/store implements it on PostgreSQL). */
  ledger: Ledger;
  /** What payments approved on the approval page delivered, kept for their callers (src/store). */
  delivered: DeliveredData;
  /** The approval page of a payment (PUBLIC_URL + `/approve/<paymentId>`), for the face's readers. */
  approvalUrl?: (paymentId: string) => string;
  discoveryUrls: string[];
  catalogFile?: string;
  rpcUrls: Record<string, string>;
  /** Origins reachable even though they are private or loopback (the devnet's services). */
  allowPrivateOrigins: string[];
  signerKeys: SignerKey[];
  reconcileIntervalMs: number;
  /** Unexpected failures, with a few words on where (the client hears only a stable code). */
  onError?: (error: unknown, context?: string) => void;
  /** The clock of every payment step; default the system's. */
  now?: () => Date;
  /** How long an unclear payment's immediate check on chain may hold the stream (default 5 s). */
  resolveNowMs?: number;
  /** A caller's payments, for `face.listPayments` (src/store's history). */
  history?: PaymentHistory;
  /** QUOTE_SECRET: the key quote ids are signed with (default: random, this process only). */
  quoteSecret?: string;
  /**
   * Told what happens to payments (every step, early refusals, reconciliation, approval answers):
   * the audit trail, metrics, traces (`fanOut` for several). Never waited on; see PaymentEvents.
   */
  events?: PaymentEvents;
  /** The operator's kill switch (src/operator's cache), asked before anything is signed or submitted. */
  pauses?: PaymentPauses;
  /** An operator key bound to a held key's wallet may sign with it (the embedded devnet only). */
  grantsMaySign?: boolean;
  /** Tabs (docs/payments.md#tabs): their store and settings; absent, no tab can be opened. */
  tabs?: TabsOptions;
}

export interface Payments {
  /**
   * Everything a caller can do with money (face.ts): the chat's tools (src/agent), the MCP server,
   * the payment reads and the approval page's endpoints (src/http) wrap it.
   */
  face: PaymentsFace;
  /**
   * Reconciliation now, beside the periodic one `start()` begins: resolve one payment, or sweep
   * everything unclear (the soak and the tests that must not wait for the interval).
   */
  reconciler: Pick<Reconciler, "resolve" | "sweep">;
  /**
   * Resolve what a previous process left unclear, then keep resolving every `reconcileIntervalMs`.
   * Separate from opening, so wiring the service starts no timer.
   */
  start(): Promise<void>;
  /** One cheap RPC call to a configured network (readiness); throws when it does not answer. */
  pingChain(network: string, signal: AbortSignal): Promise<void>;
  /** Tabs: open, fund, read and close them (absent when the service keeps none). */
  tabs?: TabDesk;
  close(): Promise<void>;
}

/** What payments reach outside: services (only where policy allows) and discovery through them. */
function outbound(options: PaymentsOptions, now: () => Date) {
  const safeFetch = createSafeFetch({
    allowPrivate: "none",
    allowOrigins: options.allowPrivateOrigins,
    timeoutMs: options.serviceTimeoutMs,
    maxBytes: 1024 * 1024,
  });
  const discovery = createDiscovery({
    urls: options.discoveryUrls,
    ...(options.catalogFile ? { catalogFile: options.catalogFile } : {}),
    fetch: safeFetch,
    usdAssets: Object.values(options.assets).flat(),
    now: () => now().getTime(),
  });
  return { safeFetch, discovery };
}

/** Reconciliation now: payments first, then tabs (a tab waits for its payments to be final). */
function reconcileNow(reconciler: Reconciler, keeper: TabKeeper | undefined): Payments["reconciler"] {
  return {
    resolve: (paymentId) => reconciler.resolve(paymentId),
    async sweep() {
      const swept = await reconciler.sweep();
      await keeper?.tick();
      return swept;
    },
  };
}

/** Wire the payment parts; `start()` begins reconciliation. */
export function createPayments(options: PaymentsOptions): Payments {
  const { ledger } = options;
  const now = options.now ?? (() => new Date());
  const clock = {
    now,
    ...(options.resolveNowMs !== undefined ? { resolveNowMs: options.resolveNowMs } : {}),
  };
  const chains = createChains(options.rpcUrls);
  const signers = createSignerRegistry(options.signerKeys, options.rpcUrls, {
    ...(options.grantsMaySign ? { grantsMaySign: true } : {}),
  });
  const pauses = options.pauses ? { pauses: options.pauses } : {};
  const { safeFetch, discovery } = outbound(options, now);
  const reconciler = createReconciler({
    ledger,
    chains,
    staleMs: options.serviceTimeoutMs * 2,
    now,
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
  const { rpcUrls, assets } = options;
  const tabs =
    options.tabs &&
    createTabs(options.tabs, { rpcUrls, assets }, chains, signers, now, options.onError, options.pauses);
  const pipeline = new PaymentPipeline({
    ...(tabs ? { tabs: tabs.desk } : {}),
    config: options,
    ledger,
    signers,
    balances: new BalanceBook(chains, () => now().getTime()),
    fetch: safeFetch,
    reconciler,
    chains,
    ...clock,
    ...pauses,
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
  const approvals = new ApprovalDesk({
    ledger,
    limits: options.limits,
    chains,
    reconciler,
    fetch: safeFetch,
    serviceTimeoutMs: options.serviceTimeoutMs,
    ...clock,
    ...pauses,
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
  const page = new PageApprovals({
    ledger,
    desk: approvals,
    delivered: options.delivered,
    chains,
    now,
    ...pauses,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const face = createPaymentsFace({
    pipeline,
    discovery,
    chains,
    signers,
    assets: options.assets,
    approvals,
    page,
    ...(options.approvalUrl ? { approvalUrl: options.approvalUrl } : {}),
    ...(options.history ? { history: options.history } : {}),
    ...(options.quoteSecret !== undefined ? { quoteSecret: options.quoteSecret } : {}),
  });
  return {
    face,
    reconciler: reconcileNow(reconciler, tabs?.keeper),
    async start() {
      // Payments a previous process left unclear are resolved first, then periodically.
      await reconciler.sweep().catch((error: unknown) => options.onError?.(error));
      reconciler.start(options.reconcileIntervalMs);
      // Tabs a previous process left closing or unclear are taken up the same way.
      await tabs?.keeper.tick();
      tabs?.keeper.start(options.reconcileIntervalMs);
    },
    pingChain: (network, signal) => chains.ping(network, signal),
    ...(tabs ? { tabs: tabs.desk } : {}),
    async close() {
      reconciler.stop();
      await tabs?.keeper.stop();
    },
  };
}

const signersFileSchema = z.array(signerKeySchema);

/**
 * Read server-held keys from a JSON file: `[{"chain":"evm","privateKey":"0x...","tokens":["..."]},
 * {"chain":"solana","secretKey":[64 numbers],"tokens":["..."]}]`. Errors never echo key material.
 */
export async function readSignersFile(path: string): Promise<SignerKey[]> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch {
    throw new Error(`SIGNERS_FILE: ${path} is not readable JSON`);
  }
  const parsed = signersFileSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.code}`).join("; ");
    throw new Error(`SIGNERS_FILE: ${path} is invalid (${where})`);
  }
  return parsed.data;
}

export type { SignerKey } from "../chains/index.js";
export { CURSOR_MAX_CHARS, QUOTE_ID_MAX_CHARS } from "./face/index.js";
export type { ApprovalView, PageAnswer, PageOutcome } from "./face/page-approval.js";
export type {
  ApprovalAnswer,
  CallerAnswer,
  PayerSession,
  PaymentListQuery,
  PaymentPage,
  PaymentReader,
  PaymentsFace,
  PaymentView,
  PayWhat,
  Quote,
  TakenApproval,
  WalletReader,
} from "./face.js";
export type {
  HistoryOwner,
  HistoryQuery,
  KeyEnd,
  KeyGrant,
  Ledger,
  LedgerReads,
  Payer,
  PaymentEvent,
  PaymentEvents,
  PaymentFactsSeen,
  PaymentHistory,
  PaymentPause,
  PaymentPauses,
  PaymentRecord,
  StoredApproval,
  TabStore,
} from "./ports/index.js";
export { fanOut } from "./ports/index.js";
export { LEDGER_STATUSES, type PaymentObserver, SUGGESTED_LIMITS } from "./rules/index.js";
export { ledgerRebuilder, type Rebuilt } from "./run/index.js";
export { facilitatorSettler, type TabDesk, type TabOnPage, type TabsOptions } from "./tabs/index.js";

/** Whether `value` is a `nextCursor` this service gave (GET /api/payments checks its query with it). */
export function isPaymentCursor(value: string): boolean {
  return decodeCursor(value) !== undefined;
}
