import { decodePaymentRequiredHeader } from "@x402/core/http";
import { type Activity, countingFetch } from "../activity.js";
import { type DevnetChains, solanaWalletOf, walletOf } from "../chains.js";
import { EVM_NETWORK, USDC_DOMAIN } from "../evm/chain.js";
import type { DiscoveryCatalog } from "../facilitator/catalog.js";
import type { FaultSwitch } from "../faults.js";
import { DevnetHttpServer } from "../http-server.js";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../solana/node.js";
import { createServiceApp, type PaymentRail } from "./app.js";
import { SERVICE_DEFINITIONS, type ServiceDefinition } from "./definitions.js";

/**
 * The paid demo services, each on a server of its own, listed in discovery with the quote each
 * gives a client (so the catalog says what the services really ask).
 */

export interface RunningService {
  definition: ServiceDefinition;
  server: DevnetHttpServer;
  url: string;
}

/** What the services accept: USDC on the EVM chain, and on Solana when it runs; paid to the merchant. */
export function paymentRails({ evm, solana }: DevnetChains): PaymentRail[] {
  const rails: PaymentRail[] = [
    {
      network: EVM_NETWORK,
      asset: evm.usdc,
      payTo: walletOf(evm, "merchant").address,
      extra: { ...USDC_DOMAIN },
    },
  ];
  if (solana) {
    rails.push({
      network: SOLANA_NETWORK,
      asset: SOLANA_USDC_MINT,
      payTo: solanaWalletOf(solana, "merchant").address,
    });
  }
  return rails;
}

export interface ServicesDeps {
  host: string;
  facilitatorUrl: string;
  rails: PaymentRail[];
  faults: FaultSwitch;
  activity: Activity;
  catalog: DiscoveryCatalog;
  onStop: (stop: () => Promise<void>) => void;
}

export async function startServices(deps: ServicesDeps): Promise<RunningService[]> {
  const { host, facilitatorUrl, rails, faults, activity } = deps;
  const services: RunningService[] = [];
  for (const definition of SERVICE_DEFINITIONS) {
    const server = new DevnetHttpServer(host);
    await server.start();
    deps.onStop(() => server.stop());
    const url = `${server.url}${definition.path}`;
    const app = createServiceApp({ definition, url, facilitatorUrl, rails, faults });
    server.setHandler(countingFetch(app.fetch, activity, "serving"));
    services.push({ definition, server, url });
  }
  await Promise.all(
    services.map(async (s) => deps.catalog.upsertFromPaymentRequired(await probeQuote(s.definition, s.url))),
  );
  return services;
}

/** Asks a service for a quote the way a client would, and returns its decoded 402. */
async function probeQuote(definition: ServiceDefinition, url: string) {
  const example = definition.input.example;
  const response =
    definition.method === "GET"
      ? await fetch(`${url}?${new URLSearchParams(example)}`)
      : await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(example),
        });
  await response.arrayBuffer();
  const header = response.headers.get("payment-required");
  if (response.status !== 402 || !header) {
    throw new Error(`service ${definition.id} did not quote a price (HTTP ${response.status})`);
  }
  return decodePaymentRequiredHeader(header);
}
