import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { getAddress, type Hex, isErc6492Signature, parseErc6492Signature } from "viem";
import { withTokenDomain } from "./evm-domain.js";
import { evmPublicClient, evmWalletChecks } from "./evm-wallets.js";
import {
  type ChainFamily,
  ChainUnreadable,
  WalletAnswerMismatch,
  WalletCannotPay,
  type WalletChecks,
  type WalletSigningRequest,
} from "./types.js";

/**
 * An EVM payment signed in the user's own wallet (docs/payments.md, "Approval"): the stand-in
 * signer that records the EIP-712 typed data the wallet is asked to sign, and the checks its
 * answer must pass before it replaces the empty signature.
 */

/** What the stand-in signer returns: 65 zero bytes, replaced by the wallet's signature on approval. */
const NO_SIGNATURE = `0x${"00".repeat(65)}` as const;

/** Half the secp256k1 group order: a canonical signature's s is at most this. */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** Seconds kept in hand after an approval to submit the payment before `validBefore`. */
const SUBMIT_MARGIN_SECONDS = 10;

const EIP712_DOMAIN_TYPES = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
];

type TypedData = Extract<WalletSigningRequest, { kind: "evm-typed-data" }>["typedData"];

interface SdkTypedData {
  domain: Record<string, unknown>;
  types: Record<string, unknown>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** JSON for eth_signTypedData_v4: bigints as decimal strings, the domain's type spelled out. */
function toWalletTypedData(data: SdkTypedData): TypedData {
  const plain = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v]));
  const domain = plain(data.domain);
  if (domain.chainId !== undefined) domain.chainId = Number(domain.chainId);
  return {
    domain,
    types: {
      EIP712Domain: EIP712_DOMAIN_TYPES,
      ...(data.types as TypedData["types"]),
    },
    primaryType: data.primaryType,
    message: plain(data.message),
  };
}

/**
 * The SDK's exact scheme builds the EIP-3009 authorization and asks its signer for the EIP-712
 * signature: the stand-in keeps the typed data and answers with an empty signature.
 */
export const draftForWallet: ChainFamily["draftForWallet"] = (address, network, rpcUrl) => {
  let recorded: TypedData | undefined;
  const signer = {
    address: getAddress(address),
    async signTypedData(data: SdkTypedData) {
      recorded = toWalletTypedData(data);
      return NO_SIGNATURE;
    },
  };
  return {
    schemes: withTokenDomain({ v2: new ExactEvmScheme(signer), v1: new ExactEvmSchemeV1(signer) }, rpcUrl),
    request() {
      if (!recorded) throw new Error("the EVM scheme asked for no signature");
      return { kind: "evm-typed-data", method: "eth_signTypedData_v4", typedData: recorded };
    },
    expiresAt(payload) {
      const auth = (payload.payload as { authorization?: { validBefore?: unknown } }).authorization;
      return Number(auth?.validBefore) - SUBMIT_MARGIN_SECONDS;
    },
    // A contract wallet is not asked to sign for a token that could not check its signature.
    ...(rpcUrl
      ? {
          assertCanPay: (asset: string) =>
            evmWalletChecks(evmPublicClient(rpcUrl), network).assertCanPay(asset, address),
        }
      : {}),
  };
};

/**
 * The signature must be the wallet's over exactly the stored typed data, as the chain judges it
 * (viem's verifyTypedData: an EOA's ECDSA signature, a deployed contract wallet's EIP-1271
 * answer, an EIP-6492 wrapper), and that typed data must be the stored authorization: then it
 * goes where the SDK put the empty one. A contract wallet must be deployed, and the token must
 * check contract signatures (EIP-1271), or the signature could never move the funds.
 */
export const completeForWallet: ChainFamily["completeForWallet"] = async (
  payload,
  request,
  answer,
  wallet,
  chain,
) => {
  if (request.kind !== "evm-typed-data" || !("signature" in answer)) {
    throw new WalletAnswerMismatch("an EVM payment is approved with a signature of its typed data");
  }
  const inner = payload.payload as { authorization?: Record<string, unknown>; signature?: unknown };
  const auth = inner.authorization;
  const message = request.typedData.message;
  if (
    !auth ||
    ["from", "to", "value", "validAfter", "validBefore", "nonce"].some(
      (k) => String(auth[k]).toLowerCase() !== String(message[k]).toLowerCase(),
    )
  ) {
    throw new WalletAnswerMismatch("the stored payment and its typed data differ");
  }
  const checks = chain?.wallets;
  // From the typed data: an x402 v1 payload has no `accepted`.
  const network = `eip155:${Number(request.typedData.domain.chainId)}`;
  if (!checks) throw new ChainUnreadable(`no RPC endpoint is configured for ${network}`);
  const asset = String(request.typedData.domain.verifyingContract);
  const isContract = await checks.isContract(wallet);
  let signature = answer.signature;
  if (isErc6492Signature(signature)) {
    signature = await unwrapErc6492(checks, request.typedData, signature, wallet, isContract, network);
  }
  if (signature.length === 132) assertCanonical(signature, isContract);
  if (!(await checks.verifyTypedData(request.typedData, signature, wallet))) throw notSigned();
  if (isContract) await checks.assertCanPay(asset, wallet);
  return { ...payload, payload: { ...inner, signature } };
};

const notSigned = () =>
  new WalletAnswerMismatch(
    "the signature was not made by this wallet over the stored terms (amount, payee, nonce, validity)",
  );

/**
 * An EIP-6492 signature (a contract wallet not deployed yet, or one that says so anyway): it must
 * hold, and the wallet must be deployed, for its inner signature is what the token will check.
 */
async function unwrapErc6492(
  checks: WalletChecks,
  typedData: TypedData,
  signature: Hex,
  wallet: string,
  isContract: boolean,
  network: string,
): Promise<Hex> {
  if (!(await checks.verifyTypedData(typedData, signature, wallet))) throw notSigned();
  // Settling would first need the facilitator to deploy the wallet, which a seller's
  // facilitator does only for factories it allows: refused rather than signed away.
  if (!isContract) {
    throw new WalletCannotPay(
      "wallet_not_deployed",
      `This smart-contract wallet is not deployed on ${network} yet (the signature is an EIP-6492 one), and a payment cannot deploy it. Deploy the wallet (send any transaction from it), then approve again.`,
    );
  }
  // Deployed: the token checks the wallet's own signature through EIP-1271.
  return parseErc6492Signature(signature).signature;
}

/**
 * The facilitator sends a 65-byte signature as (v, r, s): v must be 27/28 (or 0/1). And an EOA's
 * must be canonical: the token refuses a high-s one (malleability), which would fail on chain
 * after the approval was used up.
 */
function assertCanonical(signature: Hex, isContract: boolean): void {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if ((!isContract && s > HALF_ORDER) || ![0, 1, 27, 28].includes(v)) {
    throw new WalletAnswerMismatch("the signature is not in canonical form (low s, v of 27 or 28)");
  }
}
