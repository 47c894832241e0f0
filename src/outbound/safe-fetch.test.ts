import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import { createSafeFetch, SafeFetchBlockedError, type SafeFetchPolicy } from "./index.js";

interface Loopback {
  origin: string;
  hits: string[];
  close(): Promise<void>;
}

/** A real Hono app on a loopback address (127.0.0.1 unless told), port 0. */
async function serve(app: Hono, host = "127.0.0.1"): Promise<Loopback> {
  const hits: string[] = [];
  const listener = getRequestListener((request) => {
    hits.push(`${request.method} ${new URL(request.url).pathname}`);
    return app.fetch(request);
  });
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let main: Loopback;
let other: Loopback;
let held: Loopback;
let closedOrigin: string;

const base = {
  allowPrivate: "none",
  timeoutMs: 2_000,
  maxBytes: 64 * 1024,
} as const satisfies SafeFetchPolicy;

beforeAll(async () => {
  const otherApp = new Hono().get("/hello", (c) => c.text("hello from other"));
  other = await serve(otherApp);
  const app = new Hono()
    .get("/json", (c) => c.json({ ok: true, auth: c.req.header("authorization") ?? null }))
    .post("/echo", async (c) =>
      c.json({ method: c.req.method, type: c.req.header("content-type"), body: await c.req.text() }),
    )
    .get("/big", (c) => c.text("x".repeat(10_000)))
    .get("/to-other", (c) => c.redirect(`${other.origin}/hello`, 302))
    .get("/to-metadata", (c) => c.redirect("http://169.254.169.254/latest/meta-data/", 302))
    .get("/to-loopback-literal", (c) => c.redirect("http://[::1]:1/", 307))
    .get("/loop/:n", (c) => c.redirect(`/loop/${Number(c.req.param("n")) + 1}`, 302))
    .post("/see-other", (c) => c.redirect("/echo-get", 303))
    .get("/echo-get", (c) => c.json({ method: c.req.method, length: c.req.header("content-length") ?? null }))
    .get("/never", () => new Promise<Response>(() => {}))
    .get("/stall-body", () => {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("partial"));
        },
      });
      return new Response(stream, { headers: { "content-type": "text/plain" } });
    });
  main = await serve(app);
  // A port nothing answers on: held on 127.0.0.1 by a server of ours, so no other test file's
  // server can take it (not even on 0.0.0.0), and asked for on 127.0.0.2, where nothing listens.
  // A port closed after use could be handed to a server of a test file running beside this one.
  held = await serve(new Hono());
  closedOrigin = held.origin.replace("127.0.0.1", "127.0.0.2");
});

afterAll(async () => {
  await main?.close();
  await other?.close();
  await held?.close();
});

/** A transport that must never be reached, for targets refused before any traffic. */
const unreachable: typeof fetch = () => {
  throw new Error("no request may be sent");
};
const noDns = async (host: string): Promise<string[]> => {
  throw new Error(`no DNS lookup expected for ${host}`);
};

async function refusal(promise: Promise<unknown>): Promise<SafeFetchBlockedError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SafeFetchBlockedError);
  return error as SafeFetchBlockedError;
}

async function appError(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error("expected an AppError");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("blocked targets", () => {
  const safeFetch = createSafeFetch({
    ...base,
    fetch: unreachable,
    lookup: async (host) => (host === "localhost" ? ["127.0.0.1"] : noDns(host)),
  });

  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://localhost:8080/", "loopback"],
    ["http://app.localhost/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://169.254.169.254/latest/meta-data/iam/", "link-local"],
    ["http://10.0.0.1/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[fe80::1]/", "link-local"],
    ["http://100.64.0.1/", "shared-cgnat"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
  ])("%s is refused as %s without sending anything", async (url, kind) => {
    const error = await refusal(safeFetch(url));
    expect(error.reason).toBe("blocked_address");
    expect(error.addressClass).toBe(kind);
    expect(error.message).toMatch(new RegExp(` is an? ${kind} address;`));
    expect(error.message).not.toMatch(/ a [aeiou]/);
  });

  it("refuses a host name when any of its addresses is private", async () => {
    const lookedUp: string[] = [];
    const guarded = createSafeFetch({
      ...base,
      fetch: unreachable,
      lookup: async (host) => {
        lookedUp.push(host);
        return ["93.184.216.34", "10.1.2.3"];
      },
    });
    const error = await refusal(guarded("https://rebind.example/internal"));
    expect(error).toMatchObject({ reason: "blocked_address", addressClass: "private" });
    expect(error.message).toContain("rebind.example");
    expect(lookedUp).toEqual(["rebind.example"]);
  });

  it.each([
    ["file:///etc/passwd", "unsupported_scheme"],
    ["ftp://example.com/file", "unsupported_scheme"],
    ["data:text/plain,hi", "unsupported_scheme"],
    ["javascript:alert(1)", "unsupported_scheme"],
    ["gopher://example.com/", "unsupported_scheme"],
    ["http://user:secret@example.com/", "credentials_in_url"],
    ["/relative/path", "invalid_url"],
    ["not a url", "invalid_url"],
  ])("%s is refused (%s)", async (url, reason) => {
    const error = await refusal(safeFetch(url));
    expect(error.reason).toBe(reason);
    expect(error.message).not.toContain("secret");
  });

  it("reports a DNS failure as service_unavailable", async () => {
    const guarded = createSafeFetch({
      ...base,
      fetch: unreachable,
      lookup: async () => {
        throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
      },
    });
    const error = await appError(guarded("https://nowhere.example/"));
    expect(error.code).toBe("service_unavailable");
    expect(error.message).toBe("DNS lookup failed for nowhere.example");
  });
});

describe("public targets (injected DNS and transport, no real traffic)", () => {
  it("sends to a public address with manual redirects and returns the body", async () => {
    const calls: Array<{ url: string; init: RequestInit | undefined }> = [];
    const safeFetch = createSafeFetch({
      ...base,
      lookup: async () => ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
      fetch: async (input, init) => {
        calls.push({ url: String(input), init });
        return new Response("public hello", { status: 200, headers: { "content-type": "text/plain" } });
      },
    });
    const response = await safeFetch("https://api.example.com/weather?city=Paris");
    expect(response).toMatchObject({
      status: 200,
      url: "https://api.example.com/weather?city=Paris",
      truncated: false,
    });
    expect(new TextDecoder().decode(response.body)).toBe("public hello");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.init?.redirect).toBe("manual");
  });

  it("drops credentials headers when a redirect leaves the origin, keeps them within it", async () => {
    const seen: Array<{ url: string; auth: string | null; payment: string | null }> = [];
    const safeFetch = createSafeFetch({
      ...base,
      lookup: async () => ["93.184.216.34"],
      fetch: async (input, init) => {
        const headers = new Headers(init?.headers);
        const url = String(input);
        seen.push({ url, auth: headers.get("authorization"), payment: headers.get("payment-signature") });
        if (url === "https://a.example/start")
          return new Response(null, { status: 307, headers: { location: "/same" } });
        if (url === "https://a.example/same")
          return new Response(null, { status: 307, headers: { location: "https://b.example/away" } });
        return new Response("done");
      },
    });
    await safeFetch("https://a.example/start", {
      headers: { authorization: "Bearer t0ken", "payment-signature": "c2lnbmF0dXJl" },
    });
    expect(seen).toEqual([
      { url: "https://a.example/start", auth: "Bearer t0ken", payment: "c2lnbmF0dXJl" },
      { url: "https://a.example/same", auth: "Bearer t0ken", payment: "c2lnbmF0dXJl" },
      { url: "https://b.example/away", auth: null, payment: null },
    ]);
  });

  it("refuses a redirect from a public host to a private one", async () => {
    const sent: string[] = [];
    const safeFetch = createSafeFetch({
      ...base,
      lookup: async (host) => (host === "evil.example" ? ["93.184.216.34"] : ["192.168.0.10"]),
      fetch: async (input) => {
        sent.push(String(input));
        return new Response(null, { status: 302, headers: { location: "http://router.internal/admin" } });
      },
    });
    const error = await refusal(safeFetch("https://evil.example/"));
    expect(error).toMatchObject({ reason: "blocked_address", addressClass: "private" });
    expect(sent).toEqual(["https://evil.example/"]);
  });
});

describe("loopback services on the allow-list (real server)", () => {
  const allowed = () => createSafeFetch({ ...base, allowOrigins: [main.origin, other.origin] });

  it("fetches from an allowed loopback origin", async () => {
    const response = await allowed()(`${main.origin}/json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(JSON.parse(new TextDecoder().decode(response.body))).toEqual({ ok: true, auth: null });
  });

  it("still refuses loopback origins not on the list", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [other.origin] });
    const before = main.hits.length;
    const error = await refusal(safeFetch(`${main.origin}/json`));
    expect(error.addressClass).toBe("loopback");
    expect(main.hits.length).toBe(before);
  });

  it('allows any address with allowPrivate "all"', async () => {
    const response = await createSafeFetch({ ...base, allowPrivate: "all" })(`${main.origin}/json`);
    expect(response.status).toBe(200);
  });

  it("sends a POST body and its content type", async () => {
    const response = await allowed()(`${main.origin}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "hi" }),
    });
    expect(JSON.parse(new TextDecoder().decode(response.body))).toEqual({
      method: "POST",
      type: "application/json",
      body: '{"text":"hi"}',
    });
  });

  it("follows a redirect to another allowed origin", async () => {
    const response = await allowed()(`${main.origin}/to-other`);
    expect(response.url).toBe(`${other.origin}/hello`);
    expect(new TextDecoder().decode(response.body)).toBe("hello from other");
  });

  it("refuses a redirect from an allowed origin to a blocked one", async () => {
    const onlyMain = createSafeFetch({ ...base, allowOrigins: [main.origin] });
    const otherHits = other.hits.length;
    expect((await refusal(onlyMain(`${main.origin}/to-other`))).addressClass).toBe("loopback");
    expect(other.hits.length).toBe(otherHits);
    expect((await refusal(onlyMain(`${main.origin}/to-metadata`))).addressClass).toBe("link-local");
    expect((await refusal(onlyMain(`${main.origin}/to-loopback-literal`))).addressClass).toBe("loopback");
  });

  it("asks allowOrigin before every hop: a refused origin hears nothing", async () => {
    const onlyMain = (origin: string) => origin === main.origin;
    const otherHits = other.hits.length;
    const error = await refusal(allowed()(`${main.origin}/to-other`, { allowOrigin: onlyMain }));
    expect(error.reason).toBe("origin_not_allowed");
    expect(error.message).toContain(other.origin);
    expect(other.hits.length).toBe(otherHits);
    const mainHits = main.hits.length;
    const first = await refusal(allowed()(`${main.origin}/json`, { allowOrigin: () => false }));
    expect(first.reason).toBe("origin_not_allowed");
    expect(main.hits.length).toBe(mainHits);
  });

  it("returns a cross-origin redirect unfollowed with followCrossOrigin: false, follows one within the origin", async () => {
    const otherHits = other.hits.length;
    const response = await allowed()(`${main.origin}/to-other`, { followCrossOrigin: false });
    expect(response.status).toBe(302);
    expect(other.hits.length).toBe(otherHits);
    const same = await allowed()(`${main.origin}/see-other`, {
      method: "POST",
      body: "x",
      followCrossOrigin: false,
    });
    expect(same.status).toBe(200);
    expect(same.method).toBe("GET");
  });

  it("returns the redirect itself with redirect: manual", async () => {
    const response = await allowed()(`${main.origin}/to-other`, { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(`${other.origin}/hello`);
  });

  it("stops after maxRedirects hops", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [main.origin], maxRedirects: 2 });
    const before = main.hits.length;
    const error = await refusal(safeFetch(`${main.origin}/loop/0`));
    expect(error.reason).toBe("too_many_redirects");
    expect(main.hits.slice(before)).toEqual(["GET /loop/0", "GET /loop/1", "GET /loop/2"]);
    const defaultLimit = await refusal(allowed()(`${main.origin}/loop/0`));
    expect(defaultLimit.message).toContain("More than 3 redirects");
  });

  it("turns a POST into a GET without body on 303", async () => {
    const response = await allowed()(`${main.origin}/see-other`, { method: "POST", body: "payload" });
    expect(JSON.parse(new TextDecoder().decode(response.body))).toEqual({ method: "GET", length: null });
  });

  it("cuts the body at maxBytes and says so", async () => {
    const small = createSafeFetch({ ...base, allowOrigins: [main.origin], maxBytes: 1_000 });
    const cut = await small(`${main.origin}/big`);
    expect(cut.body.byteLength).toBe(1_000);
    expect(cut.truncated).toBe(true);
    const whole = await allowed()(`${main.origin}/big`);
    expect(whole.body.byteLength).toBe(10_000);
    expect(whole.truncated).toBe(false);
    const exact = await createSafeFetch({ ...base, allowOrigins: [main.origin], maxBytes: 10_000 })(
      `${main.origin}/big`,
    );
    expect(exact.truncated).toBe(false);
  });
});

describe("DNS pinning (real server on 127.0.0.2)", () => {
  it("connects to the address it resolved and checked, never to a second answer", async () => {
    // Only 127.0.0.2 serves this port: reaching it proves the socket used the pinned address,
    // since the system resolver would send "localhost" to 127.0.0.1 or ::1.
    const pinned = await serve(
      new Hono().get("/who", (c) => c.text("pinned")),
      "127.0.0.2",
    );
    try {
      const port = new URL(pinned.origin).port;
      const answers = [["127.0.0.2"], ["127.0.0.1"]];
      const lookups: string[] = [];
      const safeFetch = createSafeFetch({
        ...base,
        allowOrigins: [`http://localhost:${port}`],
        lookup: async (host) => {
          lookups.push(host);
          return answers[lookups.length - 1] ?? ["127.0.0.1"];
        },
      });
      const response = await safeFetch(`http://localhost:${port}/who`);
      expect(new TextDecoder().decode(response.body)).toBe("pinned");
      expect(lookups).toEqual(["localhost"]);
    } finally {
      await pinned.close();
    }
  });
});

describe("failures", () => {
  it("times out a server that never answers", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [main.origin], timeoutMs: 150 });
    // The server never answers: only the timeout can end the call, and the message says it did.
    const error = await appError(safeFetch(`${main.origin}/never`));
    expect(error.code).toBe("service_unavailable");
    expect(error.message).toBe(`${main.origin} did not answer within 150 ms`);
  });

  it("times out a body that stalls after the headers", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [main.origin], timeoutMs: 150 });
    const error = await appError(safeFetch(`${main.origin}/stall-body`));
    expect(error.message).toContain("did not answer within 150 ms");
  });

  it("passes the caller's abort through as an abort, not a service failure", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [main.origin] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await safeFetch(`${main.origin}/never`, { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(AppError);
    expect((error as Error).name).toBe("AbortError");
  });

  it("reports a refused connection as service_unavailable", async () => {
    const safeFetch = createSafeFetch({ ...base, allowOrigins: [closedOrigin] });
    const error = await appError(safeFetch(`${closedOrigin}/anything`));
    expect(error.code).toBe("service_unavailable");
    expect(error.message).toBe(`Could not reach ${closedOrigin} (ECONNREFUSED)`);
  });
});
