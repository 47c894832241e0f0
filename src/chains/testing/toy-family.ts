import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { z } from "zod/v4";
import {
  type ChainConnection,
  type ChainFamily,
  ChainUnreadable,
  type LoadedKey,
  type NetworkSchemes,
  type SchemeClient,
  type SigningExpectation,
  WalletAnswerMismatch,
  WalletCannotPay,
  type WalletDraft,
  type WalletSigningRequest,
} from "../types.js";
import type { ToyAuthorization, ToyChain } from "./toy-chain.js";

/**
 * The toy chain as a `ChainFamily` (src/chains/types.ts): x402 "exact" scheme clients that sign
 * toy authorizations (a held key, or a draft the user's wallet signs), the check that a signed
 * payload is what was quoted, and a connection that reads balances and resolves payments from the
 * {@link ToyChain}. Its networks are `toy:<id>`; its wallets are EVM-shaped (the wallet schema
 * knows the built-in families only), so its `name` is "evm" and it registers by namespace alone
 * (`registerChainFamily`). Test support only.
 */

export const TOY_NAMESPACE = "toy";
export const TOY_NETWORK = "toy:1";
export const TOY_USDC = "0x00000000000000000000000000000000000a11ce";

/** A key the toy chain holds for a wallet: the account's label (its secret stays in the chain). */
export interface ToyKey {
  chain: "evm";
  label: string;
}

const keySchema = z.object({ chain: z.literal("evm"), label: z.string() });

interface ToyPayload {
  authorization: ToyAuthorization;
  signature: string;
}

function authorizationOf(payload: PaymentPayload): ToyAuthorization {
  const inner = payload.payload as Partial<ToyPayload> | undefined;
  const a = inner?.authorization;
  if (!a || typeof a.nonce !== "string" || typeof a.from !== "string") {
    throw new Error("not a toy payment payload");
  }
  return a;
}

/** The scheme client of one payer: signs (`sign`: a held key) or leaves the signature empty (a draft). */
function schemeFor(chain: ToyChain, payer: string, sign: boolean): SchemeClient {
  return {
    scheme: "exact",
    async createPaymentPayload(x402Version: number, requirements: PaymentRequirements) {
      const legacy = requirements as PaymentRequirements & { maxAmountRequired?: string };
      const nowS = Math.floor(chain.now() / 1000);
      const authorization: ToyAuthorization = {
        from: payer,
        to: requirements.payTo,
        value: String(x402Version === 1 ? legacy.maxAmountRequired : requirements.amount),
        validAfter: String(nowS),
        validBefore: String(nowS + requirements.maxTimeoutSeconds),
        nonce: chain.nextNonce(),
      };
      const signature = sign ? chain.sign(authorization) : "";
      return { x402Version, payload: { authorization, signature } };
    },
  } as SchemeClient;
}

/** Toy addresses compare as EVM's do: case carries no meaning. */
const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

const both = (client: SchemeClient): NetworkSchemes => ({ v2: client, v1: client });

function typedData(network: string, authorization: ToyAuthorization): WalletSigningRequest {
  return {
    kind: "evm-typed-data",
    method: "eth_signTypedData_v4",
    typedData: {
      domain: { name: "Toy USD", chainId: network },
      types: {
        TransferWithAuthorization: ["from", "to", "value", "validAfter", "validBefore", "nonce"].map(
          (name) => ({ name, type: "string" }),
        ),
      },
      primaryType: "TransferWithAuthorization",
      message: { ...authorization },
    },
  };
}

export function createToyFamily(chain: ToyChain): ChainFamily<ToyKey> {
  const connection: ChainConnection = {
    balance: async (asset, owner) => chain.balanceOf(asset, owner),
    resolve: async (payment, now) => chain.resolve(payment, now),
    confirm: async (payment, transaction) => chain.confirm(payment, transaction),
    ping: async () => chain.assertReadable(),
  };
  return {
    name: "evm",
    namespace: TOY_NAMESPACE,
    v1Networks: {},
    usdc: { [TOY_NETWORK]: [TOY_USDC] },
    parseAddress: () => undefined,
    payeeProblem: (payTo) => (/^0x0{40}$/i.test(payTo) ? "the zero address" : undefined),
    canonicalAsset: (asset) => asset.toLowerCase(),
    samePayee: sameAddress,
    keySchema,
    async loadKey(key: ToyKey): Promise<LoadedKey> {
      const address = chain.account(key.label);
      const schemes = both(schemeFor(chain, address, true));
      return { address, schemesFor: () => schemes };
    },
    connect: () => connection,
    /**
     * What was signed must be what was quoted: payee, amount, and a window no longer than the one
     * chosen (judged on the authorization's own `validAfter`, so a test's clock need not be the wall's).
     */
    authorization(payload: PaymentPayload, expected: SigningExpectation): Record<string, string> {
      const a = authorizationOf(payload);
      if (!sameAddress(a.to, expected.payTo)) throw new Error("signed payee differs");
      if (BigInt(a.value) !== expected.amount) throw new Error("signed amount differs");
      const window = Number(a.validBefore) - Number(a.validAfter);
      if (!(window > 0 && window <= expected.maxTimeoutSeconds)) throw new Error("signed window differs");
      return { kind: "toy", from: a.from, nonce: a.nonce, validBefore: a.validBefore };
    },
    draftForWallet(address: string, network: string): WalletDraft {
      return {
        schemes: both(schemeFor(chain, address, false)),
        request: (payload) => typedData(network, authorizationOf(payload)),
        expiresAt: (payload) => Number(authorizationOf(payload).validBefore),
        async assertCanPay() {
          if (chain.walletChecksDown) throw new ChainUnreadable("the toy chain does not answer");
          if (chain.cannotPay.has(address)) {
            throw new WalletCannotPay(
              "contract_wallet_unsupported",
              "This toy wallet cannot sign for the token.",
            );
          }
        },
      };
    },
    async completeForWallet(payload, request, answer, wallet) {
      const a = authorizationOf(payload);
      if (!("signature" in answer)) throw new WalletAnswerMismatch("a toy wallet answers with a signature");
      const asked = request.kind === "evm-typed-data" ? request.typedData.message : undefined;
      const same = JSON.stringify(asked) === JSON.stringify({ ...a });
      if (!same || a.from !== wallet || !chain.verify(a, answer.signature)) {
        throw new WalletAnswerMismatch("the signature does not sign the stored request with this wallet");
      }
      return { ...payload, payload: { authorization: a, signature: answer.signature } };
    },
  };
}
