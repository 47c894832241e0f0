/**
 * EIP-3009 `TransferWithAuthorization` as EIP-712 typed data: the one builder the tests sign and
 * verify an EVM payment authorization with (viem's `signTypedData` / `verifyTypedData` take it as is).
 * The product builds its own through x402's EVM scheme; this is test support only.
 */

/** The EIP-712 types of an EIP-3009 transfer authorization. */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** The typed data of a transfer authorization on the token of `domain`. */
export function transferWithAuthorization<const Domain extends object, const Message extends object>(
  domain: Domain,
  message: Message,
) {
  return {
    domain,
    // A mutable copy: some signers type their `types` as plain arrays.
    types: { TransferWithAuthorization: [...TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization] },
    primaryType: "TransferWithAuthorization" as const,
    message,
  };
}
