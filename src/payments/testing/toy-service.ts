import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { TOY_NETWORK, TOY_USDC, type ToyAuthorization, type ToyChain } from "../../chains/testing/index.js";
import { type SafeFetch, SafeFetchBlockedError, type SafeResponse } from "../../outbound/index.js";

/**
 * A paid x402 service on the toy chain, as a `SafeFetch` (test support). An unpaid call gets a v2
 * 402 with one offer; a paid call is settled on the {@link ToyChain} (whose `landing` switch says
 * what the chain does) and answered as `after` says: with its data and the settlement proof, or in
 * one of the ways that leave a payment unclear. It asks the caller's `allowOrigin` like the real
 * fetch, and records every call.
 */

/** How the service answers a paid call. */
export type After =
  /** 200 with the data and `PAYMENT-RESPONSE` when the chain settled; 402 with its reason when not. */
  | "answers"
  /** 200 with the data but no settlement proof. */
  | "no-proof"
  /** HTTP 500. */
  | "error"
  /** No answer at all (the connection drops). */
  | "silent"
  /** A redirect to another origin. */
  | "redirect";

export interface ToyOffer {
  /** Atomic units (6 decimals). */
  price: bigint;
  payTo: string;
  network: string;
  asset: string;
  maxTimeoutSeconds: number;
}

export interface ToyCall {
  url: string;
  method: string;
  paid: boolean;
}

export const TOY_SERVICE_URL = "https://toy.example/weather";

export class ToyService {
  after: After = "answers";
  /** Answer 200 to an unpaid call (a free service). */
  free = false;
  /** Unpaid calls get no answer (the service is down). */
  down = false;
  /** The outbound policy refuses the service's address (a private one, say). */
  blocked = false;
  /** Answer unpaid calls with a 402 that carries no readable x402 demand. */
  unreadable = false;
  /** Answer unpaid calls with this 4xx (the call's input is refused), when set. */
  refuses: number | undefined;
  readonly offer: ToyOffer;
  readonly calls: ToyCall[] = [];
  readonly data = { city: "Paris", temperatureC: 18 };

  constructor(
    private readonly chain: ToyChain,
    offer: Partial<ToyOffer> & { payTo: string },
  ) {
    this.offer = { price: 10_000n, network: TOY_NETWORK, asset: TOY_USDC, maxTimeoutSeconds: 60, ...offer };
  }

  readonly fetch: SafeFetch = async (url, init = {}) => {
    const origin = new URL(url).origin;
    if (init.allowOrigin && !init.allowOrigin(origin)) {
      throw new SafeFetchBlockedError("origin_not_allowed", `${new URL(url).host} is not allowed`);
    }
    if (this.blocked) throw new SafeFetchBlockedError("blocked_address", `${new URL(url).host} is private`);
    const headers = new Headers(init.headers as Record<string, string> | undefined);
    const signature = headers.get("PAYMENT-SIGNATURE");
    const method = init.method ?? "GET";
    this.calls.push({ url, method, paid: signature !== null });
    if (!signature) return this.unpaid(url, method);
    return this.paid(url, method, signature);
  };

  /** The demand this service makes now. */
  demand(url: string): PaymentRequired {
    const { offer } = this;
    return {
      x402Version: 2,
      resource: { url, description: "toy weather", mimeType: "application/json" },
      accepts: [
        {
          scheme: "exact",
          network: offer.network as `${string}:${string}`,
          amount: offer.price.toString(),
          asset: offer.asset,
          payTo: offer.payTo,
          maxTimeoutSeconds: offer.maxTimeoutSeconds,
          extra: {},
        },
      ],
    } as PaymentRequired;
  }

  private unpaid(url: string, method: string): SafeResponse {
    if (this.down) throw new TypeError("fetch failed: connection refused");
    if (this.free) return respond(url, method, 200, {}, this.data);
    if (this.unreadable) return respond(url, method, 402, {}, { pay: "somehow" });
    if (this.refuses !== undefined) return respond(url, method, this.refuses, {}, { error: "bad input" });
    return respond(
      url,
      method,
      402,
      { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(this.demand(url)) },
      {},
    );
  }

  private paid(url: string, method: string, header: string): SafeResponse {
    const payload = decodePaymentSignatureHeader(header);
    const inner = payload.payload as { authorization: ToyAuthorization; signature: string };
    const settlement = this.chain.submit(this.offer.asset, inner.authorization, inner.signature);
    switch (this.after) {
      case "silent":
        throw new TypeError("fetch failed: the toy service hung up");
      case "error":
        return respond(url, method, 500, {}, { error: "boom" });
      case "redirect":
        return respond(url, method, 302, { location: "https://elsewhere.example/" }, {});
      case "no-proof":
        return respond(url, method, 200, {}, this.data);
      default:
        break;
    }
    if (!settlement) return respond(url, method, 504, {}, { error: "settlement timed out" });
    if (!settlement.success) {
      const demand = { ...this.demand(url), error: settlement.errorReason };
      return respond(url, method, 402, { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(demand) }, {});
    }
    const proof = encodePaymentResponseHeader({
      success: true,
      transaction: settlement.transaction,
      network: this.offer.network as `${string}:${string}`,
      payer: settlement.payer,
    });
    return respond(url, method, 200, { "PAYMENT-RESPONSE": proof }, this.data);
  }
}

function respond(
  url: string,
  method: string,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): SafeResponse {
  return {
    status,
    headers: new Headers({ "content-type": "application/json", ...headers }),
    url,
    method,
    body: new TextEncoder().encode(JSON.stringify(body)),
    truncated: false,
  };
}
