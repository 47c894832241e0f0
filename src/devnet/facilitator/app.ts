import type { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { Hono } from "hono";
import type { FaultSwitch } from "../faults.js";
import { type DiscoveryCatalog, parseDiscoveryQuery } from "./catalog.js";

/** `errorReason` of a settlement refused by the `settleFail` fault. */
export const SETTLE_FAULT_REASON = "devnet_settle_fault";

export interface FacilitatorAppDeps {
  facilitator: x402Facilitator;
  catalog: DiscoveryCatalog;
  faults: FaultSwitch;
  /** Resolves when a hung `/settle` reply may finally be sent (fault reset or devnet stop). */
  hangUntilReleased: () => Promise<void>;
  /** Resolves when a `/settle` held by `settleLate` may go on to the chain (fault off, or devnet stop). */
  lateUntilReleased?: () => Promise<void>;
  log: (line: string) => void;
}

interface FacilitatorRequest {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

/**
 * The facilitator's HTTP face: the x402 facilitator API (`/verify`, `/settle`, `/supported`)
 * over `@x402/core`'s facilitator, bazaar discovery, and the settlement faults.
 */
export function createFacilitatorApp(deps: FacilitatorAppDeps): Hono {
  const { facilitator, catalog, faults, log } = deps;
  const app = new Hono();

  app.use("*", async (c, next) => {
    if (faults.get().facilitatorDown === "503") {
      return c.json({ error: "facilitator unavailable (devnet fault facilitatorDown=503)" }, 503);
    }
    await next();
  });

  app.get("/supported", (c) => c.json(facilitator.getSupported()));

  app.post("/verify", async (c) => {
    const body = await readRequest(c.req.raw);
    if (!body) return c.json({ isValid: false, invalidReason: "invalid_request" }, 400);
    try {
      return c.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements));
    } catch (error) {
      log(`facilitator: verify threw: ${errorMessage(error)}`);
      return c.json({
        isValid: false,
        invalidReason: "unexpected_verify_error",
        invalidMessage: errorMessage(error),
      });
    }
  });

  app.post("/settle", async (c) => {
    const body = await readRequest(c.req.raw);
    if (!body)
      return c.json({ success: false, errorReason: "invalid_request", transaction: "", network: "" }, 400);
    return c.json(await settle(deps, body));
  });

  app.get("/discovery/resources", (c) => {
    try {
      return c.json(catalog.list(parseDiscoveryQuery(new URL(c.req.url).searchParams)));
    } catch (error) {
      return c.json({ error: errorMessage(error) }, 400);
    }
  });

  return app;
}

/**
 * One settlement as the devnet runs it: the faults first (`settleLate`, `settleDelayMs`,
 * `settleFail`), then the chain, the catalog's `lastUpdated`, and `settleHangAfterChain` last.
 */
async function settle(deps: FacilitatorAppDeps, body: FacilitatorRequest): Promise<SettleResponse> {
  const { facilitator, catalog, faults, log } = deps;
  const { paymentPayload, paymentRequirements } = body;
  if (faults.get().settleLate) {
    log("facilitator: holding a settlement before the chain (fault settleLate)");
    await deps.lateUntilReleased?.();
  }
  const { settleDelayMs, settleFail } = faults.get();
  if (settleDelayMs > 0) await sleep(settleDelayMs);
  if (settleFail) {
    const refused: SettleResponse = {
      success: false,
      errorReason: SETTLE_FAULT_REASON,
      errorMessage: "settlement refused by the devnet fault switch settleFail",
      transaction: "",
      network: paymentRequirements.network,
    };
    return refused;
  }
  let result: SettleResponse;
  try {
    result = await facilitator.settle(paymentPayload, paymentRequirements);
  } catch (error) {
    log(`facilitator: settle threw: ${errorMessage(error)}`);
    result = {
      success: false,
      errorReason: "unexpected_settle_error",
      errorMessage: errorMessage(error),
      transaction: "",
      network: paymentRequirements.network,
    };
  }
  if (result.success) {
    // v1 requirements carry the resource URL and the price (`maxAmountRequired`) themselves.
    const v1 = paymentRequirements as { resource?: unknown; maxAmountRequired?: unknown };
    catalog.touch(paymentPayload.resource?.url ?? (typeof v1.resource === "string" ? v1.resource : ""));
    const amount = paymentRequirements.amount ?? v1.maxAmountRequired;
    log(`facilitator: settled ${String(amount)} on ${result.network} tx ${result.transaction}`);
  }
  if (faults.get().settleHangAfterChain) {
    log("facilitator: settled on chain; holding the reply (fault settleHangAfterChain)");
    await deps.hangUntilReleased();
  }
  return result;
}

async function readRequest(request: Request): Promise<FacilitatorRequest | null> {
  try {
    const body = (await request.json()) as Partial<FacilitatorRequest> | null;
    if (typeof body?.paymentPayload !== "object" || typeof body.paymentRequirements !== "object") return null;
    if (body.paymentPayload === null || body.paymentRequirements === null) return null;
    return body as FacilitatorRequest;
  } catch {
    return null;
  }
}

function sleep(ms: number): Promise<void> {
  // Unref'd: a delayed settlement must not keep a stopped devnet's process alive.
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Holds `/settle` replies for the `settleHangAfterChain` fault until released. */
export class HangGate {
  private waiters: Array<() => void> = [];

  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  releaseAll(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
