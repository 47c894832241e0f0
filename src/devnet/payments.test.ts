import { decodePaymentResponseHeader } from "@x402/core/http";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDevnet } from "../../test/setup/devnet.js";
import {
  evmPayingFetch,
  evmUsdcBalance,
  serviceRequest,
  solanaPayingFetch,
  solanaUsdcBalance,
  walletAddress,
} from "./testing/index.js";

const devnet = useTestDevnet();
const examples = new Map<string, Record<string, string>>();

beforeAll(async () => {
  // Inputs come from each service's bazaar metadata, as a discovering client would use them.
  const response = await fetch(`${devnet.manifest.discoveryUrl}?type=http&limit=100`);
  const { items } = (await response.json()) as {
    items: Array<{
      resource: string;
      extensions: { bazaar: { info: { input: { queryParams?: object; body?: object } } } };
    }>;
  };
  for (const item of items) {
    const input = item.extensions.bazaar.info.input;
    examples.set(item.resource, { ...(input.queryParams ?? input.body) } as Record<string, string>);
  }
});

function exampleFor(url: string): Record<string, string> {
  const input = examples.get(url);
  if (!input) throw new Error(`no discovery example for ${url}`);
  return input;
}

describe("paying every demo service on the EVM chain", () => {
  it("settles each price from payer to merchant and returns demo data", async () => {
    const pay = evmPayingFetch(devnet, "payer");
    const payer = walletAddress(devnet, "evm", "payer");
    const merchant = walletAddress(devnet, "evm", "merchant");
    for (const service of devnet.manifest.services) {
      const [payerBefore, merchantBefore] = [
        await evmUsdcBalance(devnet, payer),
        await evmUsdcBalance(devnet, merchant),
      ];
      const response = await pay(...serviceRequest(service, exampleFor(service.url)));
      expect(response.status, service.id).toBe(200);
      const body = (await response.json()) as { demo: boolean; note: string };
      expect(body.demo).toBe(true);
      expect(body.note).toMatch(/simulated demo data/i);
      const receipt = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");
      expect(receipt).toMatchObject({ success: true, network: devnet.manifest.evm.network });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await evmUsdcBalance(devnet, payer)).toBe(payerBefore - BigInt(service.priceAtomic));
      expect(await evmUsdcBalance(devnet, merchant)).toBe(merchantBefore + BigInt(service.priceAtomic));
    }
  });

  it("answers the same input with the same data", async () => {
    const pay = evmPayingFetch(devnet, "payer-2");
    const weather = devnet.manifest.services.find((s) => s.id === "weather")!;
    const first = await (await pay(`${weather.url}?city=Oslo`)).json();
    const second = await (await pay(`${weather.url}?city=Oslo`)).json();
    expect(second).toEqual(first);
  });

  it("answers a request without its input with 400 before asking for payment", async () => {
    const weather = devnet.manifest.services.find((s) => s.id === "weather")!;
    const response = await fetch(weather.url);
    expect(response.status).toBe(400);
    expect(response.headers.get("payment-required")).toBeNull();
  });

  it("refuses a payer without enough USDC and moves nothing", async () => {
    const pay = evmPayingFetch(devnet, "payer-low");
    const low = walletAddress(devnet, "evm", "payer-low");
    const before = await evmUsdcBalance(devnet, low);
    const weather = devnet.manifest.services.find((s) => s.id === "weather")!;
    const response = await pay(`${weather.url}?city=Oslo`);
    expect(response.status).toBe(402);
    const required = JSON.parse(
      Buffer.from(response.headers.get("payment-required") ?? "", "base64").toString(),
    );
    expect(required.error).toMatch(/insufficient/i);
    expect(await evmUsdcBalance(devnet, low)).toBe(before);
  });

  it("serves many concurrent payments without nonce or timestamp trouble", async () => {
    const pay = evmPayingFetch(devnet, "payer-2");
    const news = devnet.manifest.services.find((s) => s.id === "news")!;
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => pay(`${news.url}?topic=t${i}`)));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
  });
});

describe("paying every demo service on Solana", () => {
  it("settles each price from payer to merchant", async (ctx) => {
    if (!devnet.manifest.solana) ctx.skip();
    const pay = await solanaPayingFetch(devnet, "payer");
    const payer = walletAddress(devnet, "solana", "payer");
    const merchant = walletAddress(devnet, "solana", "merchant");
    for (const service of devnet.manifest.services) {
      const [payerBefore, merchantBefore] = [
        await solanaUsdcBalance(devnet, payer),
        await solanaUsdcBalance(devnet, merchant),
      ];
      const response = await pay(...serviceRequest(service, exampleFor(service.url)));
      expect(response.status, service.id).toBe(200);
      expect(((await response.json()) as { demo: boolean }).demo).toBe(true);
      const receipt = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");
      expect(receipt).toMatchObject({ success: true, network: devnet.manifest.solana?.network });
      expect(await solanaUsdcBalance(devnet, payer)).toBe(payerBefore - BigInt(service.priceAtomic));
      expect(await solanaUsdcBalance(devnet, merchant)).toBe(merchantBefore + BigInt(service.priceAtomic));
    }
  });

  it("refuses a payer without enough USDC", async (ctx) => {
    if (!devnet.manifest.solana) ctx.skip();
    const pay = await solanaPayingFetch(devnet, "payer-low");
    const weather = devnet.manifest.services.find((s) => s.id === "weather")!;
    const response = await pay(`${weather.url}?city=Oslo`);
    expect(response.status).toBe(402);
    expect(await solanaUsdcBalance(devnet, walletAddress(devnet, "solana", "payer-low"))).toBe(1000n);
  });
});
