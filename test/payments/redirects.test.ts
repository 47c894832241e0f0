/**
 * docs/payments.md#server-side-requests: the service that is paid is the origin that issued the 402, and it
 * must pass `allowedServices` and the outbound-request policy at every redirect hop; the payment
 * header goes only to that origin, and a paid request never follows a redirect elsewhere. Quotes
 * obey the same admission. What a service sends back reaches the model cleaned. A loopback origin
 * listed in ALLOW_PRIVATE_ORIGINS is reachable with PAYMENTS=devnet.
 *
 * Two attacker-controlled origins on loopback: A redirects, B records every request it gets.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  type ChatResult,
  chat,
  evmBalances,
  rowsOf,
  type ScriptedCall,
  ScriptedModels,
  serviceUrl,
  useTestDevnet,
} from "./harness.js";

interface Seen {
  path: string;
  paymentHeader: boolean;
}

interface Origin {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** A loopback server answering from `route`, recording each request's path and payment header. */
async function origin(
  route: (path: string, paid: boolean, res: http.ServerResponse) => void,
): Promise<Origin> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const paid = Boolean(req.headers["payment-signature"] ?? req.headers["x-payment"]);
    const path = req.url ?? "/";
    seen.push({ path, paymentHeader: paid });
    req.resume();
    route(path.split("?")[0] ?? "/", paid, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const redirect = (res: http.ServerResponse, location: string) => {
  res.writeHead(302, { location });
  res.end();
};

const devnet = useTestDevnet();
let booted: Booted;
let a: Origin;
let b: Origin;
/** The devnet weather service's own 402 header: a demand that names the devnet merchant. */
let weatherDemand = "";
const models = new ScriptedModels();
const HIDDEN = "\u{E0049}\u{E0067}\u{E006E}\u202Eevil\u2066";

beforeAll(async () => {
  const weather = `${serviceUrl(devnet, "weather")}?city=Paris`;
  weatherDemand = (await fetch(weather)).headers.get("payment-required") ?? "";
  b = await origin((path, _paid, res) => {
    if (path === "/free") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ [`note${HIDDEN}`]: `sunny${HIDDEN} and warm`, list: [`a\u200Fb`] }));
      return;
    }
    res.writeHead(402, { "payment-required": weatherDemand, "content-type": "application/json" });
    res.end("{}");
  });
  a = await origin((path, paid, res) => {
    if (path === "/to-b") return redirect(res, `${b.url}/weather?city=Paris`);
    if (path === "/to-free") return redirect(res, `${b.url}/free`);
    if (path === "/to-private") return redirect(res, "http://169.254.169.254/latest/meta-data");
    if (path === "/loop") return redirect(res, `${a.url}/loop`);
    if (path === "/to-weather") return redirect(res, weather);
    if (path === "/demand-then-redirect") {
      // Asks for payment itself, then sends the paid request on to B.
      if (paid) return redirect(res, `${b.url}/collect`);
      res.writeHead(402, { "payment-required": weatherDemand, "content-type": "application/json" });
      res.end("{}");
      return;
    }
    res.writeHead(404);
    res.end();
  });
  booted = await boot(devnet, {
    store: "pglite",
    models: models.registry,
    env: { ALLOW_PRIVATE_ORIGINS: `${a.url},${b.url}` },
  });
});

afterAll(async () => {
  await booted?.close();
  await a?.close();
  await b?.close();
});

beforeEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
});

const pay = (url: string): ScriptedCall => ({ toolName: "pay_and_fetch", input: { url, method: "GET" } });
const quote = (url: string): ScriptedCall => ({ toolName: "get_quote", input: { url, method: "GET" } });

async function run(name: string, steps: ScriptedCall[][], spendingLimits?: Record<string, unknown>) {
  return chat(booted.running, {
    wallet: walletAddress(devnet, "evm", "payer"),
    token: devnet.manifest.devToken,
    message: models.script(name, steps),
    ...(spendingLimits ? { spendingLimits } : {}),
  });
}

async function expectNothingPaid(result: ChatResult, before: Awaited<ReturnType<typeof evmBalances>>) {
  expect(await rowsOf(booted.running, result)).toEqual([]);
  expect(result.payments).toEqual([]);
  expect(result.finish.transactions).toEqual([]);
  expect(await evmBalances(devnet)).toEqual(before);
}

describe("the origin that issues the 402 is the service paid, and it must be allowed", () => {
  it("refuses a redirect to another origin's 402 when only the first origin is allowed; B hears nothing", async () => {
    const before = await evmBalances(devnet);
    const result = await run("redirect-402", [[pay(`${a.url}/to-b`)]], { allowedServices: [a.url] });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors).toEqual([
      expect.objectContaining({ code: "limit_exceeded", limit: "allowedServices" }),
    ]);
    expect(result.errors[0]?.message).toContain(b.url);
    expect(a.seen.map((s) => s.path)).toEqual(["/to-b"]);
    expect(b.seen).toEqual([]);
    await expectNothingPaid(result, before);
  });

  it("refuses a redirect to a free page on another origin that is not allowed", async () => {
    const before = await evmBalances(devnet);
    const result = await run("redirect-free", [[pay(`${a.url}/to-free`)]], { allowedServices: [a.url] });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(b.seen).toEqual([]);
    await expectNothingPaid(result, before);
  });

  it("a service that redirects without end is unavailable, nothing paid", async () => {
    const before = await evmBalances(devnet);
    const result = await run("redirect-loop", [[pay(`${a.url}/loop`)]]);
    expect(result.errors.at(-1)).toMatchObject({ code: "service_unavailable" });
    expect(result.errors.at(-1)?.message).toMatch(/^More than 3 redirects/);
    await expectNothingPaid(result, before);
  });

  it("refuses a redirect to a private address, whatever the limits", async () => {
    const before = await evmBalances(devnet);
    const result = await run("redirect-private", [[pay(`${a.url}/to-private`)]]);
    // The message names the hop that was refused, not the allowed service that redirected there.
    const message = result.errors.at(-1)?.message ?? "";
    expect(message).toMatch(/^169\.254\.169\.254 is a link-local address.*\(blocked_address\)/);
    expect(message).not.toContain(new URL(a.url).host);
    expect(result.finish.finishReason).not.toBe("payment-complete");
    await expectNothingPaid(result, before);
  });

  it("pays the origin that issued the demand, directly: the redirecting origin never sees the payment", async () => {
    const weather = serviceUrl(devnet, "weather");
    const result = await run("redirect-allowed", [[pay(`${a.url}/to-weather`)]], {
      allowedServices: [a.url, new URL(weather).origin],
    });
    expect(result.finish.finishReason).toBe("payment-complete");
    const settled = result.payments.find((p) => p.status === "settled");
    expect(settled?.service.url.startsWith(weather)).toBe(true);
    expect(a.seen).toEqual([{ path: "/to-weather", paymentHeader: false }]);
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => [r.status, new URL(r.service).origin])).toEqual([
      ["settled", new URL(weather).origin],
    ]);
  });

  it("a paid request never follows a redirect to another origin", async () => {
    const result = await run("paid-redirect", [[pay(`${a.url}/demand-then-redirect`)]]);
    // A asked for payment, so A alone got the payment header; its redirect to B was not followed.
    expect(a.seen.filter((s) => s.paymentHeader)).toHaveLength(1);
    expect(b.seen).toEqual([]);
    expect(result.payments.map((p) => p.status)).not.toContain("settled");
    expect(result.finish.finishReason).not.toBe("payment-complete");
  });
});

describe("quotes obey the same admission as payments", () => {
  it("never calls an origin outside allowedServices for a price", async () => {
    const result = await run("quote-other", [[quote(`${b.url}/weather?q=the+system+prompt`)]], {
      allowedServices: [a.url],
    });
    expect(b.seen).toEqual([]);
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors[0]).toMatchObject({ code: "limit_exceeded", limit: "allowedServices" });
  });

  it("never follows a quote's redirect to an origin outside allowedServices", async () => {
    await run("quote-redirect", [[quote(`${a.url}/to-b`)]], { allowedServices: [a.url] });
    expect(a.seen).toHaveLength(1);
    expect(b.seen).toEqual([]);
  });
});

describe("text from outside reaches the model cleaned, and marked", () => {
  it("removes tag characters and bidi controls from a service's answer, keys included", async () => {
    const calls = models.model.doStreamCalls.length;
    const result = await run("hidden", [[pay(`${b.url}/free`)]]);
    expect(b.seen).toHaveLength(1);
    const prompts = models.model.doStreamCalls.slice(calls).map((c) => JSON.stringify(c.prompt));
    const toolResult = prompts.find((p) => p.includes("sunny"));
    expect(toolResult).toBeDefined();
    expect(toolResult).not.toMatch(/[\u{E0000}-\u{E007F}\u202A-\u202E\u2066-\u2069\u200E\u200F]/u);
    expect(toolResult).toContain("sunnyevil and warm");
    expect(toolResult).toContain('"removedCharacters":11');
    expect(result.finish.finishReason).toBe("stop");
  });
});
