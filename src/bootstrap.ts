import { approvalPrelude, createPaymentTools } from "./agent/index.js";
import { type AuditLog, auditPaymentEvents } from "./audit/index.js";
import {
  auditLogOf,
  observed,
  openStoreOf,
  operatorBanner,
  operatorControls,
  readinessChecks,
  startOwnDevnet,
  UNCLEAR,
  walletSignInOf,
} from "./bootstrap-parts.js";
import {
  type DevnetHandle,
  devnetUserWallets,
  fromDevnet,
  fromEnv,
  paymentsOptions,
} from "./bootstrap-sources.js";
import { tabsOptions } from "./bootstrap-tabs.js";
import { approvalUrl, type Config } from "./config/index.js";
import type { Devnet } from "./devnet/index.js";
import { mountDevnetWallets } from "./http/devnet-wallet.js";
import type { Logger } from "./log/index.js";
import type { ModelRegistry } from "./models/index.js";
import { createObservability, type Observability } from "./observe/index.js";
import type { ControlPlane, OperatorCache, OperatorEvent } from "./operator/index.js";
import {
  type CallerAnswer,
  createPayments,
  ledgerRebuilder,
  type PageAnswer,
  type Payments,
  type SignerKey,
} from "./payments/index.js";
import { explorerTxUrl } from "./protocol/index.js";
import { createService, type Service } from "./service.js";
import type { Store } from "./store/index.js";

/**
 * The composition root for a running process: config -> (embedded devnet) -> store and payments ->
 * agent -> HTTP app. `main.ts` calls it; integration tests and benchmarks call it too.
 */
export type { DevnetHandle } from "./bootstrap-sources.js";

export interface Running {
  service: Service;
  payments?: Payments;
  /** The ledger's store (PGlite or a server); closed by the service's shutdown. */
  store?: Store;
  /** The embedded devnet this process started (not one passed in {@link BootstrapOptions}). */
  devnet?: Devnet;
  /**
   * The audit trail (docs/audit.md): payments' events are recorded in it; operator tools add their
   * actions (`appendControl`) and its routes read it. Closed (flushed) by the service's shutdown.
   */
  audit?: AuditLog;
  /** Lines for people: URLs, wallets, the dev token. Never private keys. */
  banner: string[];
  /**
   * The operator's controls (docs/deploy.md#operating-it): this instance's copy of the keys and
   * pauses (tests refresh it rather than wait), the control plane and the operator token.
   */
  operator?: { cache: OperatorCache; plane: ControlPlane; token: string };
}

export interface BootstrapOptions {
  /** Where the embedded devnet writes its manifest (null: nowhere). */
  devnetManifest?: string | null;
  /**
   * Reuse a devnet that is already running (tests share one, possibly in another process: only its
   * manifest and keys are read); it is not stopped on shutdown.
   */
  devnet?: DevnetHandle;
  /** Replace the model registry (tests script the model). */
  models?: ModelRegistry;
  /**
   * The one clock of the service and its payments (deadlines, leases, limits' 24 h window,
   * approval windows, reconciliation); default the system's.
   */
  now?: () => Date;
  /**
   * Traces and metrics; default made from the environment (OTEL_EXPORTER_OTLP_ENDPOINT turns
   * tracing on; docs/deploy.md#traces-and-metrics).
   */
  observe?: Observability;
  /** An in-memory store starts from this image (`StoreOptions.image`; tests boot many services). */
  storeImage?: Blob;
  /** Told of every key and pause change (the audit trail); no secrets in it. Default: the log. */
  onOperatorChange?: (event: OperatorEvent) => void;
}

/**
 * Everything HTTP reaches of payments, through their face: the chat's tools and approvals,
 * GET /api/payments(/:id), the approval page's endpoints and the MCP server. `localRpcUrls`: the
 * embedded devnet's networks, on this machine only, which no public explorer has.
 */
function paymentRoutes(payments: Payments, config: Config, localRpcUrls: Record<string, string>) {
  const { face } = payments;
  const { publicUrl } = config;
  const { quoteSecret } = config.payments;
  return {
    tools: createPaymentTools(face),
    // Checks run before the stream opens; the delivery is the turn's first step (src/agent).
    resumeApproval: async (input: CallerAnswer) => approvalPrelude(await face.takeUpApproval(input)),
    payments: {
      face,
      explorer: (network: string, tx: string) =>
        Object.hasOwn(localRpcUrls, network) ? undefined : explorerTxUrl(network, tx),
    },
    approvals: {
      view: (id: string) => face.viewApproval(id),
      answer: (input: PageAnswer) => face.answerOnPage(input),
      // A tab opened through MCP is funded on the same page (docs/mcp.md, "Tabs").
      ...(payments.tabs ? { tabs: payments.tabs } : {}),
    },
    // /api/tabs: open, fund, read and close tabs (docs/protocol.md, "Tabs").
    ...(payments.tabs ? { tabs: { tabs: payments.tabs } } : {}),
    // POST /mcp on the same face, wallet rules and ledger (docs/mcp.md).
    mcp: {
      face,
      approvalUrl: (id: string) => approvalUrl(publicUrl, id),
      ...(payments.tabs ? { tabs: payments.tabs } : {}),
      // requestState is sealed under QUOTE_SECRET, so any instance that shares it opens it.
      ...(quoteSecret ? { stateSecret: quoteSecret } : {}),
    },
  };
}

export async function bootstrap(
  config: Config,
  logger: Logger,
  options: BootstrapOptions = {},
): Promise<Running> {
  const p = config.payments;
  const observe = options.observe ?? createObservability();
  if (p.mode === "off") {
    return {
      service: createService(config, logger, { observe }),
      banner: ["Payments are off (PAYMENTS=off): the agent only talks."],
    };
  }
  const ownDevnet = p.mode === "devnet" && !options.devnet;
  // The store needs nothing from the devnet: it opens while the devnet starts (start-up time,
  // docs/benchmarks.md), once its directory is held. If either fails, the other is closed first.
  const { opening: storeOpening, held } = openStoreOf(p, options.storeImage);
  let devnet: DevnetHandle | undefined;
  let own: Devnet | undefined;
  try {
    if (ownDevnet) own = await held.then(() => startOwnDevnet(options, logger));
    devnet = p.mode !== "devnet" ? undefined : (options.devnet ?? own);
  } catch (error) {
    await storeOpening.then((opened) => opened.close()).catch(() => {});
    if (!options.observe) await observe.shutdown().catch(() => {});
    throw error;
  }
  let store: Store | undefined;
  try {
    store = await storeOpening;
    const opened = store;
    const sources = devnet ? fromDevnet(devnet) : await fromEnv(config);
    const tabs = await tabsOptions(config, opened, sources.facilitatorUrl);
    const tokens = bearerTokens(config, sources.signerKeys, devnet !== undefined);
    const audit = auditLogOf(opened, logger);
    const operator = await operatorControls(config, opened, logger, options, tokens.values(), audit);
    const payments = createPayments(
      observed(
        {
          ...paymentsOptions(config, sources, opened, logger, options.now),
          // What happens to payments is told to its watchers: the audit trail, metrics, traces.
          events: auditPaymentEvents(audit),
          pauses: operator.cache,
          ...(devnet ? { grantsMaySign: true } : {}), // a key bound to a devnet wallet signs as the dev token
          ...tabs.payments,
        },
        observe,
      ),
    );
    const service = createService({ ...config, auth: { ...config.auth, tokens } }, logger, {
      operator: {
        keys: operator.cache,
        routes: { plane: operator.plane, token: operator.token, audit, logger },
      },
      ...(options.models ? { models: options.models } : {}),
      ...(options.now ? { now: options.now } : {}),
      observe,
      ...paymentRoutes(payments, config, devnet ? sources.rpcUrls : {}),
      walletSignIn: walletSignInOf(config, opened, sources.rpcUrls, options.now),
      // A key whose attempt died is answered from the ledger's rows (docs/protocol.md, "After a crash").
      rebuild: ledgerRebuilder(opened.ledger),
      idempotency: opened.idempotency,
      health: () => ({
        payments: { mode: p.mode, store: opened.kind, networks: sources.allowedNetworks },
      }),
      readiness: readinessChecks(opened, Object.keys(sources.rpcUrls), payments),
      onShutdown: async () => {
        operator.cache.stop();
        await payments.close();
        // The records still queued are written before the store closes.
        await audit.close();
        await opened.close();
        await own?.stop();
      },
    });
    observe.metrics.readFrom({
      // At scrape time: the payments the reconciler has yet to resolve (few; one indexed read).
      unclearPayments: () => opened.ledger.listByStatus(UNCLEAR).then((rows) => rows.length),
      pausedScopes: () => operator.cache.pausedScopes,
    });
    // The web page's "devnet wallet": only while the embedded devnet runs, never with real networks.
    if (devnet) mountDevnetWallets(service.app, devnetUserWallets(devnet));
    // Everything is wired: now start what runs on its own (reconciliation, the operator's refresh).
    await payments.start();
    operator.cache.start();
    const banner = [...sources.banner, tabs.banner, ...operatorBanner(config)];
    return { service, payments, store: opened, ...(own ? { devnet: own } : {}), banner, operator, audit };
  } catch (error) {
    await store?.close().catch(() => {});
    await own?.stop();
    if (!options.observe) await observe.shutdown().catch(() => {});
    throw error;
  }
}

/** The configured bearer tokens, and those bound to server-held keys (valid for the chat too). */
function bearerTokens(config: Config, signerKeys: SignerKey[], devnet: boolean): Map<string, string> {
  const tokens = new Map(config.auth.tokens);
  signerKeys.forEach((key, i) => {
    for (const token of key.tokens)
      if (!tokens.has(token)) tokens.set(token, devnet ? "devnet" : `signer-${i + 1}`);
  });
  return tokens;
}
