import { createChains, registerChainFamily, type WalletDraft } from "../../chains/index.js";
import { createToyFamily, TOY_NETWORK, TOY_USDC, ToyChain } from "../../chains/testing/index.js";
import type { AppError } from "../../errors/index.js";
import type { PaymentSummary, PaymentUpdate, Wallet } from "../../protocol/index.js";
import { MemoryLedger } from "../../store/memory/index.js";
import type {
  Ledger,
  PaymentEvent,
  PaymentEvents,
  PaymentPauses,
  SignerAccess,
  SignerRegistry,
} from "../ports/index.js";
import type { LimitsConfig, PaymentObserver } from "../rules/index.js";
import {
  ApprovalDesk,
  BalanceBook,
  createReconciler,
  PaymentPipeline,
  type PaymentRequest,
  type PipelineConfig,
  type Reconciler,
} from "../run/index.js";
import { TOY_SERVICE_URL, ToyService } from "./toy-service.js";

/**
 * The payment core wired in one process, for unit tests (test support): the memory ledger, the toy
 * chain family (registered for `toy:` networks while the world is open), a toy x402 service, a
 * held key for one wallet and none for another (whose payments wait for approval), a clock the test
 * sets, and an observer that records what the client would see. No network, no database, no timer.
 */

export const USD = 1_000_000n;
/** The bearer token that may use the held key. */
export const HELD_TOKEN = "token-held";
export const T0 = Date.parse("2026-03-01T12:00:00.000Z");

/** What a turn's client sees: `p:` updates, the `d:` summary entries, and `e:` errors. */
export class RecordingObserver implements PaymentObserver {
  readonly updates: PaymentUpdate[] = [];
  readonly summaries: PaymentSummary[] = [];
  readonly errors: AppError[] = [];
  update = (u: PaymentUpdate) => void this.updates.push(u);
  summary = (s: PaymentSummary) => void this.summaries.push(s);
  error = (e: AppError) => void this.errors.push(e);
  /** The statuses streamed, in order. */
  statuses(): string[] {
    return this.updates.map((u) => u.status);
  }
}

/** A payment events watcher that keeps what it is told, in order. */
export class RecordingEvents implements PaymentEvents {
  readonly events: PaymentEvent[] = [];
  emit = (event: PaymentEvent) => void this.events.push(event);
  /** The statuses of one payment's `step` events, in order. */
  steps(paymentId: string): string[] {
    return this.events.flatMap((e) =>
      e.kind === "step" && e.payment.paymentId === paymentId ? [e.status] : [],
    );
  }
}

/** A settable clock: every part of the world reads it. */
export class Clock {
  constructor(public ms = T0) {}
  readonly now = (): number => this.ms;
  readonly date = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface ToyWorldOptions {
  limits?: Partial<LimitsConfig>;
  /** What the held-key wallet and the approving wallet hold (atomic units). */
  balance?: bigint;
  price?: bigint;
  /** The ledger the core uses, around the memory one (a ledger that fails, say). */
  ledger?: (memory: MemoryLedger) => Ledger;
  /** Where the core tells its payment events (default: a RecordingEvents the world exposes). */
  events?: PaymentEvents;
  /** The operator's kill switch (none: never paused). */
  pauses?: PaymentPauses;
}

function toySigners(chain: ToyChain, family: ReturnType<typeof createToyFamily>): SignerRegistry {
  const held = new Map<string, Promise<SignerAccess>>();
  const keyFor = (address: string) => {
    if (address !== chain.account("held")) return undefined;
    let found = held.get(address);
    if (!found) {
      found = family.loadKey({ chain: "evm", label: "held" }).then((k) => ({
        schemeFor: (network: string) => k.schemesFor(network, undefined),
      }));
      held.set(address, found);
    }
    return found;
  };
  const registry: SignerRegistry = {
    async find(wallet, { bearerToken: token }) {
      const key = keyFor(wallet.address);
      if (!key) return { ok: false, reason: "this server holds no key for that wallet, so it cannot sign" };
      if (token !== HELD_TOKEN) return { ok: false, reason: "this bearer token may not use the key" };
      return { ok: true, signer: await key };
    },
    canSign: async (wallet, who) => (await registry.find(wallet, who)).ok,
    draftFor: (wallet, network): WalletDraft => family.draftForWallet(wallet.address, network, undefined),
  };
  return registry;
}

export function createToyWorld(options: ToyWorldOptions = {}) {
  const clock = new Clock();
  const chain = new ToyChain(clock.now);
  const family = createToyFamily(chain);
  const unregister = registerChainFamily(family);
  const held: Wallet = { chain: "evm", address: chain.account("held") };
  const user: Wallet = { chain: "evm", address: chain.account("user") };
  const payee = chain.account("payee");
  for (const w of [held, user]) chain.mint(TOY_USDC, w.address, options.balance ?? 100n * USD);

  const memory = new MemoryLedger();
  const ledger = options.ledger ? options.ledger(memory) : memory;
  const service = new ToyService(chain, { payTo: payee, ...(options.price ? { price: options.price } : {}) });
  const chains = createChains({ [TOY_NETWORK]: "toy://chain" });
  const signers = toySigners(chain, family);
  const config: PipelineConfig = {
    limits: {
      defaults: { perTransaction: 1n * USD, perRequest: 2n * USD, daily: 10n * USD },
      caps: { perTransaction: 100n * USD, perRequest: 100n * USD, daily: 1000n * USD },
      allowedNetworks: [TOY_NETWORK],
      allowedServices: "any",
      ...options.limits,
    },
    assets: { [TOY_NETWORK]: [TOY_USDC] },
    preferredNetworks: [TOY_NETWORK],
    maxTimeoutSeconds: 300,
    minTimeLeftMs: 5_000,
    serviceTimeoutMs: 10_000,
  };
  const recorded = new RecordingEvents();
  const events = options.events ?? recorded;
  const errors: unknown[] = [];
  const onError = (error: unknown) => void errors.push(error);
  const reconciler: Reconciler = createReconciler({
    ledger,
    chains,
    staleMs: 20_000,
    now: clock.date,
    onError,
    events,
  });
  const pipeline = new PaymentPipeline({
    config,
    ledger,
    signers,
    balances: new BalanceBook(chains, clock.now),
    fetch: service.fetch,
    reconciler,
    chains,
    now: clock.date,
    onError,
    events,
    ...(options.pauses ? { pauses: options.pauses } : {}),
  });
  const desk = new ApprovalDesk({
    ledger,
    limits: config.limits,
    chains,
    reconciler,
    fetch: service.fetch,
    serviceTimeoutMs: config.serviceTimeoutMs,
    now: clock.date,
    onError,
    events,
    ...(options.pauses ? { pauses: options.pauses } : {}),
  });

  let requests = 0;
  /** A chat request's payment facts: the held-key wallet and its token unless `over` says otherwise. */
  const request = (over: Partial<PaymentRequest> = {}): PaymentRequest & { observer: RecordingObserver } => ({
    scopeId: `req_${++requests}`,
    wallet: held,
    bearerToken: HELD_TOKEN,
    signal: new AbortController().signal,
    deadline: clock.now() + 60_000,
    now: clock.now,
    ...over,
    observer: (over.observer as RecordingObserver | undefined) ?? new RecordingObserver(),
  });

  return {
    clock,
    chain,
    family,
    /** The memory ledger underneath (what was recorded, whatever the core's ledger did). */
    memory,
    ledger,
    service,
    chains,
    signers,
    config,
    reconciler,
    pipeline,
    desk,
    held,
    user,
    payee,
    errors,
    /** The payment events the core told (unless the world was given its own watcher). */
    events: recorded,
    request,
    url: TOY_SERVICE_URL,
    close: unregister,
  };
}

export type ToyWorld = ReturnType<typeof createToyWorld>;
