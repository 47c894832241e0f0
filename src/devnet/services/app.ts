import type { HTTPRequestContext, PaymentOption } from "@x402/core/http";
import { HTTPFacilitatorClient, type RouteConfig } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { paymentMiddleware, x402ResourceServer } from "@x402/hono";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import { Hono } from "hono";
import type { FaultSwitch } from "../faults.js";
import type { ServiceDefinition } from "./definitions.js";
import { usdToAtomic } from "./definitions.js";

/** One chain a service accepts payment on. */
export interface PaymentRail {
  network: Network;
  /** Token contract (EVM) or mint (Solana). */
  asset: string;
  payTo: string;
  /** Scheme-specific `extra`, e.g. the EIP-712 domain for EVM. */
  extra?: Record<string, unknown>;
}

export interface ServiceAppDeps {
  definition: ServiceDefinition;
  /** Public URL of the paid endpoint (used as the x402 `resource`). */
  url: string;
  facilitatorUrl: string;
  rails: PaymentRail[];
  faults: FaultSwitch;
}

/** How long a service waits for the facilitator before giving up on verify/settle. */
const FACILITATOR_TIMEOUT_MS = 30_000;

/**
 * A paid demo service: a Hono app behind the real `@x402/hono` payment middleware, offering
 * every rail in `accepts`, with bazaar metadata for discovery. Faults: 503 when switched down,
 * and re-quoting at a multiplied price when `requoteMultiplier` is set.
 */
export function createServiceApp(deps: ServiceAppDeps): Hono {
  const { definition: def, faults } = deps;
  const listPrice = usdToAtomic(def.priceUsd);
  let quotesWhileRequoting = 0;
  faults.onChange((next, prev) => {
    if (next.requoteMultiplier !== prev.requoteMultiplier) quotesWhileRequoting = 0;
  });
  // The price multiplier of one request, decided once for all its rails (x402 hands each rail's
  // price function the same request context). Not an AsyncLocalStorage: on Node 20 one in use
  // turns on promise hooks for every promise of the process, the service's included (about a
  // third of what the devnet's process allocated under load).
  const multipliers = new WeakMap<HTTPRequestContext, number>();
  const multiplierFor = (context: HTTPRequestContext): number => {
    let multiplier = multipliers.get(context);
    if (multiplier !== undefined) return multiplier;
    multiplier = 1;
    const requote = faults.get().requoteMultiplier;
    if (requote !== null) {
      const paying = Boolean(
        context.paymentHeader ??
          context.adapter.getHeader("payment-signature") ??
          context.adapter.getHeader("x-payment"),
      );
      if (paying || quotesWhileRequoting > 0) multiplier = requote;
      if (!paying) quotesWhileRequoting++;
    }
    multipliers.set(context, multiplier);
    return multiplier;
  };

  const resourceServer = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: deps.facilitatorUrl, timeoutMs: FACILITATOR_TIMEOUT_MS }),
  );
  const accepts: PaymentOption[] = deps.rails.map((rail) => {
    resourceServer.register(
      rail.network,
      rail.network.startsWith("solana:") ? new ExactSvmScheme() : new ExactEvmScheme(),
    );
    return {
      scheme: "exact",
      network: rail.network,
      payTo: rail.payTo,
      maxTimeoutSeconds: 60,
      price: (context) => ({
        asset: rail.asset,
        amount: scaled(listPrice, multiplierFor(context)).toString(),
        ...(rail.extra ? { extra: rail.extra } : {}),
      }),
    };
  });
  const route: RouteConfig = {
    accepts,
    resource: deps.url,
    description: def.description,
    mimeType: "application/json",
    serviceName: def.name,
    tags: def.tags,
    extensions: declareDiscoveryExtension({
      input: def.input.example,
      inputSchema: { type: "object", ...def.input.schema },
      ...(def.method === "POST" ? { bodyType: "json" as const } : {}),
      output: { example: def.handle(def.input.example), schema: def.outputSchema },
    }),
  };

  const app = new Hono();
  app.use("*", async (c, next) => {
    if (faults.serviceAnswers503(def.id)) {
      return c.json({ error: `${def.name} is unavailable (devnet fault serviceDown)` }, 503);
    }
    await next();
  });
  // Validate input before asking for money: a bad request gets a 400, not a 402.
  app.use(def.path, async (c, next) => {
    if (c.req.method !== def.method) return next();
    const input = await readInput(c.req.raw.clone(), def.method, new URL(c.req.url));
    const problem = validateInput(def, input);
    if (problem) return c.json({ error: problem }, 400);
    return next();
  });
  app.use(paymentMiddleware({ [`${def.method} ${def.path}`]: route }, resourceServer));
  app.on(def.method, def.path, async (c) => {
    const input = await readInput(c.req.raw, def.method, new URL(c.req.url));
    return c.json(def.handle(input));
  });
  return app;
}

function scaled(atomic: bigint, multiplier: number): bigint {
  return multiplier === 1 ? atomic : BigInt(Math.round(Number(atomic) * multiplier));
}

export async function readInput(
  request: Request,
  method: "GET" | "POST",
  url: URL,
): Promise<Record<string, string>> {
  if (method === "GET") return Object.fromEntries(url.searchParams);
  try {
    const body = (await request.json()) as unknown;
    if (typeof body !== "object" || body === null || Array.isArray(body)) return {};
    return Object.fromEntries(
      Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
  } catch {
    return {};
  }
}

export function validateInput(def: ServiceDefinition, input: Record<string, string>): string | null {
  for (const name of def.input.schema.required) {
    const value = input[name];
    if (value === undefined || value.trim() === "")
      return `missing required ${def.method === "GET" ? "query parameter" : "field"} "${name}"`;
    const rule = def.input.schema.properties[name] as { maxLength?: number } | undefined;
    if (rule?.maxLength !== undefined && value.length > rule.maxLength)
      return `"${name}" is longer than ${rule.maxLength}`;
  }
  return null;
}
