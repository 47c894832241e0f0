import { readFile } from "node:fs/promises";
import { z } from "zod/v4";
import type { ToolProvider, TurnPrelude } from "../agent/index.js";
import { createChains, type SignerKey, signerKeySchema } from "../chains/index.js";
import { createDiscovery } from "../discovery/index.js";
import { createSafeFetch } from "../outbound/index.js";
import { createPaymentsFace } from "./face/index.js";
import type { PaymentsFace } from "./face.js";
import type { Ledger, PaymentHistory } from "./ports/index.js";
import { createSignerRegistry, type SignerRegistry } from "./ports/index.js";
import {
  ApprovalDesk,
  BalanceBook,
  createReconciler,
  ledgerRebuilder,
  PaymentPipeline,
  type PipelineConfig,
  type Reconciler,
  type ResumeInput,
} from "./run/index.js";
import { approvalPrelude, createPaymentTools } from "./tools.js";

/**
 * The payments capability's public face: detect x402, quote, enforce limits, pay, record, and the
 * agent tools on top. `createPayments` wires its parts (no I/O); the composition root opens the
 * store and passes its ledger and the configuration, then calls `start()`.
 */
export interface PaymentsOptions extends PipelineConfig {
  /** The payment ledger (src/store implements it on PostgreSQL). */
  ledger: Ledger;
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
}

export interface Payments {
  /** Everything a caller can do with money (face.ts): the tools, MCP and approval pages wrap it. */
  face: PaymentsFace;
  tools: ToolProvider;
  /**
   * Take up a payment the user answered in the wallet (docs/protocol.md, "Approval"): checks run
   * before the stream opens and throw AppError with the documented status; what is returned runs
   * as the turn's first step.
   */
  resumeApproval(input: ResumeInput): Promise<TurnPrelude>;
  /** Answers rebuilt from the ledger for an idempotency key whose attempt died (recovery.ts). */
  rebuild: ReturnType<typeof ledgerRebuilder>;
  ledger: Ledger;
  reconciler: Reconciler;
  signers: SignerRegistry;
  /**
   * Resolve what a previous process left unclear, then keep resolving every `reconcileIntervalMs`.
   * Separate from opening, so wiring the service starts no timer.
   */
  start(): Promise<void>;
  /** One cheap RPC call to a configured network (readiness); throws when it does not answer. */
  pingChain(network: string, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
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
  const signers = createSignerRegistry(options.signerKeys, options.rpcUrls);
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
  const reconciler = createReconciler({
    ledger,
    chains,
    staleMs: options.serviceTimeoutMs * 2,
    now,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const pipeline = new PaymentPipeline({
    config: options,
    ledger,
    signers,
    balances: new BalanceBook(chains, () => now().getTime()),
    fetch: safeFetch,
    reconciler,
    ...clock,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const approvals = new ApprovalDesk({
    ledger,
    limits: options.limits,
    chains,
    reconciler,
    fetch: safeFetch,
    serviceTimeoutMs: options.serviceTimeoutMs,
    ...clock,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const face = createPaymentsFace({
    pipeline,
    discovery,
    chains,
    signers,
    assets: options.assets,
    approvals,
    ...(options.history ? { history: options.history } : {}),
    ...(options.quoteSecret !== undefined ? { quoteSecret: options.quoteSecret } : {}),
  });
  return {
    face,
    tools: createPaymentTools(face),
    resumeApproval: async (input) => approvalPrelude(await approvals.resume(input)),
    rebuild: ledgerRebuilder(ledger),
    ledger,
    reconciler,
    signers,
    async start() {
      // Payments a previous process left unclear are resolved first, then periodically.
      await reconciler.sweep().catch((error: unknown) => options.onError?.(error));
      reconciler.start(options.reconcileIntervalMs);
    },
    pingChain: (network, signal) => chains.ping(network, signal),
    async close() {
      reconciler.stop();
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
