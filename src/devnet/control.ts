import { timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import type { ActivitySnapshot } from "./activity.js";
import { type FundRequest, parseFundRequest } from "./faucet.js";
import { type FaultSwitch, validateFaults } from "./faults.js";
import type { DevnetManifest } from "./types.js";

/** Path of the fault switch endpoint on the control server. */
export const FAULTS_PATH = "/__devnet/faults";

/** What the control server offers besides the fault switches (docs/devnet.md, "Faucet and activity"). */
export interface ControlExtras {
  /** Funds fresh wallets: `POST /__devnet/fund`. */
  fund?: (request: FundRequest) => Promise<void>;
  /** The facilitator's requests in flight: `GET /__devnet/activity`. */
  activity?: () => ActivitySnapshot;
}

/**
 * The devnet's control server: fault switches over HTTP for demos and scripts, the faucet and the
 * facilitator's activity. It runs on its own port so it stays reachable while the facilitator or
 * the services are "down". Every route requires `Authorization: Bearer <devToken>`.
 */
export function createControlApp(
  faults: FaultSwitch,
  devToken: string,
  manifest: () => DevnetManifest,
  extras: ControlExtras = {},
): Hono {
  const app = new Hono();
  app.use("*", async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    if (!tokenMatches(header.replace(/^Bearer\s+/i, ""), devToken)) {
      return c.json({ error: "missing or wrong bearer token (see the manifest's devToken)" }, 401);
    }
    await next();
  });
  app.get(FAULTS_PATH, (c) => c.json(faults.get()));
  app.post(FAULTS_PATH, async (c) => {
    let patch: unknown;
    try {
      patch = await c.req.json();
    } catch {
      return c.json({ error: "body must be JSON" }, 400);
    }
    try {
      faults.set(validateFaults(patch));
    } catch (error) {
      return c.json({ error: error instanceof Error ? error.message : String(error) }, 400);
    }
    return c.json(faults.get());
  });
  app.delete(FAULTS_PATH, (c) => {
    faults.reset();
    return c.json(faults.get());
  });
  app.get("/__devnet/manifest", (c) => c.json(manifest()));
  const { fund, activity } = extras;
  if (activity) app.get("/__devnet/activity", (c) => c.json(activity()));
  if (fund)
    app.post("/__devnet/fund", async (c) => {
      let request: FundRequest;
      try {
        request = parseFundRequest(await c.req.json());
      } catch (error) {
        return c.json({ error: error instanceof Error ? error.message : "body must be JSON" }, 400);
      }
      try {
        await fund(request);
      } catch (error) {
        return c.json({ error: error instanceof Error ? error.message : String(error) }, 409);
      }
      return c.json({ funded: request.evm.length + request.solana.length });
    });
  return app;
}

function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
