import { describe, expect, it } from "vitest";
import { useTestDevnet } from "../../test/setup/devnet.js";
import { evmPayingFetch } from "./testing/index.js";

interface Item {
  resource: string;
  type: string;
  x402Version: number;
  accepts: Array<{ network: string; amount: string; asset: string; payTo: string; scheme: string }>;
  lastUpdated: string;
  description: string;
  extensions: {
    bazaar: { info: { input: Record<string, unknown>; output: { example: unknown } }; schema: object };
  };
}
interface Page {
  x402Version: number;
  items: Item[];
  pagination: { limit: number; offset: number; total: number };
}

const devnet = useTestDevnet();
const list = async (query: string): Promise<Page> => {
  const response = await fetch(`${devnet.manifest.discoveryUrl}?${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
};

describe("bazaar discovery", () => {
  it("lists every demo service from the start, with its price on every network", async () => {
    const page = await list("type=http&limit=100");
    expect(page.x402Version).toBe(2);
    expect(page.pagination).toEqual({ limit: 100, offset: 0, total: devnet.manifest.services.length });
    for (const service of devnet.manifest.services) {
      const item = page.items.find((i) => i.resource === service.url);
      expect(item, service.id).toBeDefined();
      expect(item).toMatchObject({ type: "http", x402Version: 2, description: service.description });
      expect(item?.accepts.map((a) => a.network).sort()).toEqual([...service.networks].sort());
      for (const offer of item?.accepts ?? []) expect(offer.amount).toBe(service.priceAtomic);
      expect(item?.extensions.bazaar.info.input).toMatchObject({ type: "http", method: service.method });
      expect(item?.extensions.bazaar.info.output.example).toMatchObject({ demo: true });
      expect(item?.extensions.bazaar.schema).toBeTypeOf("object");
    }
  });

  it("includes a service priced above $1", () => {
    expect(devnet.manifest.services.some((s) => Number(s.priceUsd) > 1)).toBe(true);
  });

  it("pages with limit and offset", async () => {
    const total = devnet.manifest.services.length;
    const seen: string[] = [];
    for (let offset = 0; offset < total; offset += 2) {
      const page = await list(`type=http&limit=2&offset=${offset}`);
      expect(page.pagination).toEqual({ limit: 2, offset, total });
      expect(page.items.length).toBe(Math.min(2, total - offset));
      seen.push(...page.items.map((i) => i.resource));
    }
    expect(new Set(seen).size).toBe(total);
    expect((await list(`limit=2&offset=${total}`)).items).toEqual([]);
  });

  it("filters by network and rejects bad paging", async () => {
    const evmOnly = await list(`network=${encodeURIComponent(devnet.manifest.evm.network)}`);
    expect(evmOnly.pagination.total).toBe(devnet.manifest.services.length);
    expect((await list("network=eip155:1")).items).toEqual([]);
    expect((await fetch(`${devnet.manifest.discoveryUrl}?limit=-3`)).status).toBe(400);
  });

  it("marks a resource as updated after a payment settles", async () => {
    const weather = devnet.manifest.services.find((s) => s.id === "weather")!;
    const before = (await list("limit=100")).items.find((i) => i.resource === weather.url)!.lastUpdated;
    await new Promise((r) => setTimeout(r, 5));
    expect((await evmPayingFetch(devnet)(`${weather.url}?city=Rome`)).status).toBe(200);
    const after = (await list("limit=100")).items.find((i) => i.resource === weather.url)!.lastUpdated;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
  });
});

describe("facilitator API", () => {
  it("GET /supported lists the exact scheme on each network", async () => {
    const supported = (await (await fetch(`${devnet.manifest.facilitatorUrl}/supported`)).json()) as {
      kinds: Array<{ x402Version: number; scheme: string; network: string }>;
    };
    const networks = [devnet.manifest.evm.network, devnet.manifest.solana?.network].filter(Boolean);
    for (const network of networks) {
      expect(supported.kinds).toContainEqual(
        expect.objectContaining({ x402Version: 2, scheme: "exact", network }),
      );
    }
  });

  it("rejects malformed verify and settle requests with 400", async () => {
    for (const path of ["verify", "settle"]) {
      const response = await fetch(`${devnet.manifest.facilitatorUrl}/${path}`, {
        method: "POST",
        body: "{}",
      });
      expect(response.status).toBe(400);
    }
  });
});
