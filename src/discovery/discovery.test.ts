import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "../devnet/index.js";
import { parseUsd } from "../money/index.js";
import { createSafeFetch, type SafeFetch } from "../outbound/index.js";
import { createDiscovery, type DiscoveryFetch } from "./index.js";

let devnet: Devnet;
let safeFetch: SafeFetch;
let dir: string;

beforeAll(async () => {
  devnet = await startDevnet({ manifestPath: null, solana: false });
  const origins = [devnet.manifest.facilitatorUrl, ...devnet.manifest.services.map((s) => s.url)];
  safeFetch = createSafeFetch({
    allowPrivate: "none",
    allowOrigins: origins,
    timeoutMs: 5_000,
    maxBytes: 1 << 20,
  });
  dir = await mkdtemp(join(tmpdir(), "discovery-test-"));
});

afterAll(async () => {
  await devnet?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const service = (id: string) => {
  const found = devnet.manifest.services.find((s) => s.id === id);
  if (!found) throw new Error(`no devnet service ${id}`);
  return found;
};

/** A fetch that counts requests, to prove paging and caching. */
function counting(inner: DiscoveryFetch): DiscoveryFetch & { urls: string[] } {
  const urls: string[] = [];
  const wrapped = async (url: string, init?: Parameters<DiscoveryFetch>[1]) => {
    urls.push(url);
    return inner(url, init);
  };
  return Object.assign(wrapped, { urls });
}

describe("discovery against the devnet bazaar", () => {
  it("lists every demo service with price, networks and params", async () => {
    const discovery = createDiscovery({ urls: [devnet.manifest.discoveryUrl], fetch: safeFetch });
    const { services, errors } = await discovery.search();
    expect(errors).toEqual([]);
    expect(services.map((s) => s.url).sort()).toEqual(devnet.manifest.services.map((s) => s.url).sort());
    for (const info of devnet.manifest.services) {
      const found = services.find((s) => s.url === info.url);
      expect(found, info.id).toMatchObject({
        name: info.name,
        description: info.description,
        method: info.method,
        price: { atomic: info.priceAtomic },
        networks: info.networks,
      });
      const usd = parseUsd(found?.price?.usd);
      expect(usd.ok && usd.atomic).toBe(BigInt(info.priceAtomic));
    }
    expect(services.find((s) => s.url === service("weather").url)).toEqual({
      name: "Weather now",
      description: service("weather").description,
      url: service("weather").url,
      method: "GET",
      price: { usd: "0.01", atomic: "10000" },
      networks: [devnet.manifest.evm.network],
      params: [{ name: "city", type: "string", description: "City name", required: true }],
      example: { city: "Lisbon" },
    });
    expect(services.find((s) => s.url === service("news").url)?.price).toEqual({
      usd: "0.005",
      atomic: "5000",
    });
    expect(services.find((s) => s.url === service("sentiment").url)).toMatchObject({
      method: "POST",
      params: [{ name: "text", type: "string", required: true }],
      example: { text: "The new release is fantastic." },
    });
  });

  it.each([
    ["weather in Paris", "weather"],
    ["what's the weather like in Lisbon?", "weather"],
    ["bitcoin price", "crypto-prices"],
    ["ETH", "crypto-prices"],
    ["latest news about energy", "news"],
    ["premium research report on solar", "premium-report"],
    ["sentiment of this text", "sentiment"],
  ])("search %j ranks %s first", async (query, id) => {
    const discovery = createDiscovery({ urls: [devnet.manifest.discoveryUrl], fetch: safeFetch });
    const { services } = await discovery.search(query);
    expect(services[0]?.url).toBe(service(id).url);
  });

  it("returns nothing for a query no service matches, and everything for an empty one", async () => {
    const discovery = createDiscovery({ urls: [devnet.manifest.discoveryUrl], fetch: safeFetch });
    expect((await discovery.search("pizza delivery")).services).toEqual([]);
    expect((await discovery.search("   ")).services).toHaveLength(devnet.manifest.services.length);
  });

  it("reads every page", async () => {
    const fetch = counting(safeFetch);
    const discovery = createDiscovery({ urls: [devnet.manifest.discoveryUrl], fetch, pageSize: 2 });
    const all = await discovery.all();
    const total = devnet.manifest.services.length;
    expect(all).toHaveLength(total);
    expect(new Set(all.map((s) => s.url)).size).toBe(total);
    expect(fetch.urls).toHaveLength(Math.ceil(total / 2));
    expect(fetch.urls.map((u) => new URL(u).searchParams.get("offset"))).toEqual(
      Array.from({ length: Math.ceil(total / 2) }, (_, i) => String(i * 2)),
    );
    expect(new URL(fetch.urls[0] ?? "").searchParams.get("type")).toBe("http");
  });

  it("caches for cacheMs, then reads again", async () => {
    let clock = 0;
    const fetch = counting(safeFetch);
    const discovery = createDiscovery({
      urls: [devnet.manifest.discoveryUrl],
      fetch,
      cacheMs: 1_000,
      now: () => clock,
    });
    await Promise.all([discovery.all(), discovery.search("weather")]);
    clock = 999;
    await discovery.search("news");
    expect(fetch.urls).toHaveLength(1);
    clock = 1_000;
    await discovery.all();
    expect(fetch.urls).toHaveLength(2);
  });

  it("reports a failing source and still returns the others", async () => {
    const down = `${devnet.manifest.facilitatorUrl}/no-such-discovery`;
    const blocked = "http://169.254.169.254/discovery/resources";
    const discovery = createDiscovery({
      urls: [down, devnet.manifest.discoveryUrl, blocked],
      fetch: safeFetch,
    });
    const { services, errors } = await discovery.search("weather");
    expect(services[0]?.url).toBe(service("weather").url);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBe(`${down}: HTTP 404`);
    expect(errors[1]).toMatch(/^http:\/\/169\.254\.169\.254\/discovery\/resources: refused: .*link-local/);
  });

  it("reports an unreachable source", async () => {
    const stopped = "http://127.0.0.1:1/discovery/resources";
    const fetch = createSafeFetch({ allowPrivate: "all", timeoutMs: 2_000, maxBytes: 1 << 20 });
    const { services, errors } = await createDiscovery({ urls: [stopped], fetch }).search();
    expect(services).toEqual([]);
    expect(errors).toEqual([`${stopped}: Could not reach http://127.0.0.1:1 (ECONNREFUSED)`]);
  });

  it("merges a catalog file, bazaar entries first, deduplicated by URL", async () => {
    const file = join(dir, "catalog.json");
    await writeFile(
      file,
      JSON.stringify([
        {
          name: "Stale weather copy",
          description: "Should lose to the live bazaar entry",
          url: service("weather").url,
          price: "9.99",
        },
        {
          name: "Translation",
          description: "Translates text between languages",
          url: "https://translate.example/v1/translate",
          method: "POST",
          price: { atomic: "1500" },
          networks: ["eip155:8453"],
          params: [{ name: "text", required: true }, { name: "to" }],
          tags: ["language"],
        },
      ]),
    );
    const discovery = createDiscovery({
      urls: [devnet.manifest.discoveryUrl],
      catalogFile: file,
      fetch: safeFetch,
    });
    const { services, errors } = await discovery.search();
    expect(errors).toEqual([]);
    expect(services).toHaveLength(devnet.manifest.services.length + 1);
    expect(services.find((s) => s.url === service("weather").url)?.name).toBe("Weather now");
    expect(services.at(-1)).toEqual({
      name: "Translation",
      description: "Translates text between languages",
      url: "https://translate.example/v1/translate",
      method: "POST",
      price: { usd: "0.0015", atomic: "1500" },
      networks: ["eip155:8453"],
      params: [
        { name: "text", type: "string", required: true },
        { name: "to", type: "string", required: false },
      ],
    });
    expect((await discovery.search("language")).services.map((s) => s.name)).toEqual(["Translation"]);
  });

  it("says what is wrong with an invalid catalog and keeps the bazaar results", async () => {
    const file = join(dir, "bad-catalog.json");
    await writeFile(
      file,
      JSON.stringify([
        { name: "Ok", url: "https://ok.example/a", price: "0.01" },
        { name: "Bad", url: "ftp://bad.example/x", price: "0.0000001", prce: 1 },
      ]),
    );
    const discovery = createDiscovery({
      urls: [devnet.manifest.discoveryUrl],
      catalogFile: file,
      fetch: safeFetch,
    });
    const { services, errors } = await discovery.search();
    expect(services).toHaveLength(devnet.manifest.services.length);
    expect(errors.join("\n")).toContain(
      'catalog bad-catalog.json: entry 1 ("Bad"): url: must be an absolute http(s) URL',
    );
    expect(errors.join("\n")).toContain("price");
    expect(errors.join("\n")).toContain("prce");

    const missing = createDiscovery({ urls: [], catalogFile: join(dir, "missing.json"), fetch: safeFetch });
    expect((await missing.search()).errors).toEqual(["catalog missing.json: cannot be read (ENOENT)"]);
    const notJson = join(dir, "not.json");
    await writeFile(notJson, "{oops");
    expect(
      (await createDiscovery({ urls: [], catalogFile: notJson, fetch: safeFetch }).search()).errors,
    ).toEqual(["catalog not.json: not valid JSON"]);
  });
});
