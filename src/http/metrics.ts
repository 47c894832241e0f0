import { createHash, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { AppError } from "../errors/index.js";
import { problemResponse } from "./problem.js";

/** What GET /metrics serves: Prometheus' text exposition (src/observe) behind its own token. */
export interface MetricsRouteDeps {
  /** METRICS_TOKEN: the only bearer token this route takes. */
  token: string;
  contentType: string;
  render(): Promise<string>;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Compared as hashes, so neither the bytes nor the length of METRICS_TOKEN shows in the timing. */
function sameToken(sent: string, expected: string): boolean {
  return timingSafeEqual(digest(sent), digest(expected));
}

/**
 * `GET /metrics` (docs/deploy.md#traces-and-metrics): mounted only when METRICS_TOKEN is set;
 * `Authorization: Bearer <METRICS_TOKEN>` or 401 `unauthorized` problem+json. The API's tokens do
 * not open it, and it opens nothing else.
 */
export function mountMetrics(app: Hono, deps: MetricsRouteDeps): void {
  app.get("/metrics", async (c) => {
    const sent = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!sent || !sameToken(sent, deps.token)) {
      return problemResponse(new AppError("unauthorized", "Send Authorization: Bearer <METRICS_TOKEN>."), {
        "WWW-Authenticate": 'Bearer realm="metrics"',
      });
    }
    return c.body(await deps.render(), 200, {
      "Content-Type": deps.contentType,
      "Cache-Control": "no-store",
    });
  });
}
