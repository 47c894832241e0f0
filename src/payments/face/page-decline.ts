import { type Chains, ChainUnreadable, type WalletSigningRequest } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { networkLabel } from "../../protocol/index.js";
import type { PaymentRecord } from "../ports/index.js";

/**
 * Declining on the approval page. The page has no bearer identity, so a decline must be proven the
 * way an approval is: by the payment's own wallet. The wallet signs an EIP-712 message naming the
 * payment and itself (`DeclinePayment`, in a domain of this service and the payment's chain); the
 * signature is checked on chain as an approval's is (an EOA's key, a contract wallet's EIP-1271
 * answer). A URL alone declines nothing. Solana payments have no such check here: they cannot be
 * declined on the page, and lapse unpaid at their expiry (under a minute).
 */

type TypedDataRequest = Extract<WalletSigningRequest, { kind: "evm-typed-data" }>;

/** What the wallet signs to decline an EVM payment on the page; undefined for other chains. */
export function declineRequest(
  record: Pick<PaymentRecord, "paymentId" | "network" | "wallet">,
): TypedDataRequest | undefined {
  const match = /^eip155:(\d+)$/.exec(record.network);
  if (!match) return undefined;
  return {
    kind: "evm-typed-data",
    method: "eth_signTypedData_v4",
    typedData: {
      domain: { name: "x402-chat-agent approval page", version: "1", chainId: Number(match[1]) },
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
        ],
        DeclinePayment: [
          { name: "paymentId", type: "string" },
          { name: "wallet", type: "address" },
        ],
      },
      primaryType: "DeclinePayment",
      message: { paymentId: record.paymentId, wallet: record.wallet },
    },
  };
}

/** Throws unless `signature` is the payment's wallet's over its decline message, as the chain judges it. */
export async function checkDecline(
  chains: Pick<Chains, "connection">,
  record: PaymentRecord,
  signature: `0x${string}` | undefined,
): Promise<void> {
  const request = declineRequest(record);
  const checks = request ? chains.connection(record.network)?.wallets : undefined;
  if (!request || !checks) {
    throw new AppError(
      "approval_invalid",
      "This payment cannot be declined on the approval page: nothing is paid unless the wallet signs it, and it lapses unpaid when its window passes.",
      { details: { paymentId: record.paymentId } },
    );
  }
  if (!signature) {
    throw new AppError(
      "approval_invalid",
      "A decline on the page needs the wallet's signature of its DeclinePayment message.",
      {
        details: { paymentId: record.paymentId },
      },
    );
  }
  let valid: boolean;
  try {
    valid = await checks.verifyTypedData(request.typedData, signature, record.wallet);
  } catch (error) {
    if (!(error instanceof ChainUnreadable)) throw error;
    throw new AppError(
      "payment_failed",
      `Could not check the wallet's signature on ${networkLabel(record.network)} (${error.message}). Nothing was decided; send the same answer again.`,
    );
  }
  if (!valid) {
    throw new AppError("approval_invalid", "The decline was not signed by this payment's wallet.", {
      details: { paymentId: record.paymentId },
    });
  }
}
