import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { Hono } from "hono";
import { errorMessage } from "../facilitator/app.js";
import type { FaultSwitch } from "../faults.js";
import { DevnetHttpServer } from "../http-server.js";
import { type PaymentRail, readInput, validateInput } from "./app.js";
import { SERVICE_DEFINITIONS, type ServiceDefinition, usdToAtomic } from "./definitions.js";

/**
 * Sellers built with the real x402 v1 package (`x402-hono` 1.x over `x402` 1.x): a JSON 402 body
 * with `maxAmountRequired` and a v1 network name, payment in `X-PAYMENT`, settlement in
 * `X-PAYMENT-RESPONSE`, verify/settle through the devnet facilitator's v1 schemes. They show that
 * clients still on v1, and v1 sellers, work against this network. The v1 package takes one network
 * (and one `payTo`) per middleware, so there is one seller per network.
 *
 * The v1 package is a development dependency (it pulls in browser wallet libraries): where it is
 * not installed, the devnet runs without these sellers and says why.
 */

/** One network a v1 seller takes payment on, under its v1 name. */
export interface V1Rail {
  /** The x402 v1 network name: `solana-devnet`, or `base-sepolia` for a chain with Base Sepolia's id. */
  v1Network: string;
  /** The CAIP-2 id of the same network (what the manifest and the chat service speak). */
  network: string;
  /** Token contract (EVM) or mint (Solana), 6 decimals. */
  asset: string;
  payTo: string;
  /** EVM: the token's EIP-712 domain. */
  eip712?: { name: string; version: string };
}

export interface V1Seller {
  id: string;
  definition: ServiceDefinition;
  url: string;
  /** CAIP-2 ids of the networks it accepts (one). */
  networks: string[];
  server: DevnetHttpServer;
}

export interface V1SellersDeps {
  host: string;
  facilitatorUrl: string;
  rails: V1Rail[];
  faults: FaultSwitch;
  /** Called with each server's stop, so the caller's teardown frees the ports. */
  onStop: (stop: () => Promise<void>) => void;
  log?: (line: string) => void;
}

/**
 * The v1 form of the devnet's rails: each network that has a v1 name, under that name. The
 * Solana node poses as devnet (`solana-devnet`); an EVM chain gets a v1 name only if its chain id
 * is that of a public chain the v1 package knows (the Hardhat chain, 31337, has none).
 */
export function v1RailsFor(rails: readonly PaymentRail[]): V1Rail[] {
  const names: Array<[string, string]> = [
    ...Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, id]): [string, string] => [name, `eip155:${id}`]),
    ...Object.entries(V1_TO_V2_NETWORK_MAP),
  ];
  return rails.flatMap((rail) => {
    const v1Network = names.find(([, caip2]) => caip2 === rail.network)?.[0];
    if (!v1Network) return [];
    const domain = rail.extra as { name?: unknown; version?: unknown } | undefined;
    const eip712 =
      typeof domain?.name === "string" && typeof domain.version === "string"
        ? { name: domain.name, version: domain.version }
        : undefined;
    return [
      {
        v1Network,
        network: rail.network,
        asset: rail.asset,
        payTo: rail.payTo,
        ...(eip712 ? { eip712 } : {}),
      },
    ];
  });
}

/** What the v1 sellers sell: the weather service's data, at its price. */
const SOLD = SERVICE_DEFINITIONS.find((d) => d.id === "weather");

type PaymentMiddleware = typeof import("x402-hono").paymentMiddleware;

/** Loads the v1 middleware, or says why it cannot. */
export async function loadV1Middleware(): Promise<
  { paymentMiddleware: PaymentMiddleware } | { reason: string }
> {
  try {
    const { paymentMiddleware } = await import("x402-hono");
    return { paymentMiddleware };
  } catch (error) {
    return {
      reason: `x402-hono (the x402 v1 package, a devDependency) is not loadable: ${errorMessage(error)}`,
    };
  }
}

/**
 * Starts one v1 seller per rail, each on its own port of `host`, or says why there are none.
 * Servers close on `serviceDown: "refuse"` like the other services, and answer 503 when their id
 * is switched down.
 */
export async function startV1Sellers(deps: V1SellersDeps): Promise<{ sellers: V1Seller[]; reason?: string }> {
  if (deps.rails.length === 0) return { sellers: [], reason: "no network has an x402 v1 name" };
  const middleware = await loadV1Middleware();
  if ("reason" in middleware) return { sellers: [], reason: middleware.reason };
  if (!SOLD) throw new Error("the weather definition is missing");
  const sellers: V1Seller[] = [];
  for (const rail of deps.rails) {
    const id = `${SOLD.id}-v1-${rail.network.startsWith("solana:") ? "solana" : "evm"}`;
    const server = new DevnetHttpServer(deps.host);
    await server.start();
    deps.onStop(() => server.stop());
    const url = `${server.url}${SOLD.path}`;
    server.setHandler(createV1ServiceApp({ ...deps, id, definition: SOLD, url, rail }, middleware).fetch);
    sellers.push({ id, definition: SOLD, url, networks: [rail.network], server });
    deps.log?.(`devnet: x402 v1 seller ${id} at ${url} (${rail.v1Network})`);
  }
  deps.faults.onChange((next, prev) => {
    if ((next.serviceDown === "refuse") === (prev.serviceDown === "refuse")) return;
    for (const s of sellers) {
      (next.serviceDown === "refuse" ? s.server.pause() : s.server.resume()).catch((error: unknown) =>
        deps.log?.(`devnet: cannot toggle ${s.server.url}: ${errorMessage(error)}`),
      );
    }
  });
  return { sellers };
}

/** A v1 seller of `definition` on one rail, behind the v1 package's own middleware. */
export function createV1ServiceApp(
  deps: {
    id: string;
    definition: ServiceDefinition;
    url: string;
    facilitatorUrl: string;
    rail: V1Rail;
    faults: FaultSwitch;
  },
  middleware: { paymentMiddleware: PaymentMiddleware },
): Hono {
  const { definition: def, rail, faults } = deps;
  const amount = usdToAtomic(def.priceUsd).toString();
  const price = rail.eip712
    ? { amount, asset: { address: rail.asset as `0x${string}`, decimals: 6, eip712: rail.eip712 } }
    : { amount, asset: { address: rail.asset, decimals: 6 } };
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (faults.serviceAnswers503(deps.id)) {
      return c.json({ error: `${def.name} (x402 v1) is unavailable (devnet fault serviceDown)` }, 503);
    }
    await next();
  });
  app.use(def.path, async (c, next) => {
    if (c.req.method !== def.method) return next();
    const problem = validateInput(def, await readInput(c.req.raw.clone(), def.method, new URL(c.req.url)));
    if (problem) return c.json({ error: problem }, 400);
    return next();
  });
  app.use(
    middleware.paymentMiddleware(
      rail.payTo as `0x${string}`,
      {
        [`${def.method} ${def.path}`]: {
          price,
          network: rail.v1Network as "base-sepolia",
          config: {
            description: `${def.description} Sold by an x402 v1 seller.`,
            mimeType: "application/json",
            resource: deps.url as `${string}://${string}`,
            maxTimeoutSeconds: 60,
          },
        },
      },
      { url: deps.facilitatorUrl as `${string}://${string}` },
    ),
  );
  app.on(def.method, def.path, async (c) => {
    const input = await readInput(c.req.raw, def.method, new URL(c.req.url));
    return c.json(def.handle(input));
  });
  return app;
}
