import { timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { type FaultSwitch, validateFaults } from "./faults.js";
import type { DevnetManifest } from "./types.js";

/** Path of the fault switch endpoint on the control server. */
export const FAULTS_PATH = "/__devnet/faults";

/**
 * The devnet's control server: fault switches over HTTP for demos and scripts. It runs on its
 * own port so it stays reachable while the facilitator or the services are "down". Every route
 * requires `Authorization: Bearer <devToken>`.
 */
export function createControlApp(
  faults: FaultSwitch,
  devToken: string,
  manifest: () => DevnetManifest,
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
  return app;
}

function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
