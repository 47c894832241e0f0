import type { ApprovalRequest, PaymentUpdate, WalletRequest } from "../protocol/stream.js";
import { evmChainId, notUsdc } from "../protocol/usdc.js";

/**
 * Where an EVM payment's typed data moves something else than its update says, before the wallet
 * signs it (`describeApproval`'s `mismatches`; src/client/solana-payment.ts is Solana's). Empty
 * when it agrees.
 */

type EvmRequest = Extract<WalletRequest, { kind: "evm-typed-data" }>;

export function checkEvmApproval(
  update: PaymentUpdate,
  { wallet, expiresAt }: ApprovalRequest,
  sign: EvmRequest,
): string[] {
  return [...evmMismatches(update, wallet, sign), ...lifetimeMismatches(expiresAt, sign)];
}

/** EIP-3009's `TransferWithAuthorization`, the only typed data a payment or a tab's funding signs. */
const TRANSFER_FIELDS =
  "from:address,to:address,value:uint256,validAfter:uint256,validBefore:uint256,nonce:bytes32";

/**
 * Where EVM typed data moves something else than the update says: another struct than a USDC
 * transfer authorization, another chain than the update's network, a token that is not that
 * network's USDC (src/protocol/usdc.ts), another amount, payee or payer.
 */
function evmMismatches(update: PaymentUpdate, wallet: string, sign: EvmRequest): string[] {
  const { domain, types, primaryType, message } = sign.typedData;
  const mismatches: string[] = [];
  const fields = (Object.hasOwn(types, primaryType) ? types[primaryType] : undefined) ?? [];
  if (
    primaryType !== "TransferWithAuthorization" ||
    fields.map((f) => `${f.name}:${f.type}`).join(",") !== TRANSFER_FIELDS
  )
    mismatches.push(`signs a ${primaryType}, not a USDC transfer authorization`);
  const chainId = update.network === undefined ? undefined : evmChainId(update.network);
  if (chainId === undefined) mismatches.push(`the quote names no EVM network (${update.network ?? "none"})`);
  else if (Number(domain.chainId) !== chainId)
    mismatches.push(`signs for chain ${String(domain.chainId)}, the quote says ${update.network}`);
  else {
    const token = notUsdc(update.network as string, String(domain.verifyingContract));
    if (token) mismatches.push(token);
  }
  // A quote without its amount or payee leaves nothing to compare: that is a mismatch too.
  const same = (a: unknown, b: string | undefined) =>
    b !== undefined && String(a).toLowerCase() === b.toLowerCase();
  if (!same(message.value, update.amount?.atomic))
    mismatches.push(
      `signs value ${String(message.value)}, the quote says ${update.amount?.atomic ?? "none"}`,
    );
  if (!same(message.to, update.payTo))
    mismatches.push(`pays ${String(message.to)}, the quote says ${update.payTo ?? "no payee"}`);
  if (!same(message.from, wallet))
    mismatches.push(`pays from ${String(message.from)}, not the wallet ${wallet}`);
  return mismatches;
}

/** Seconds an EVM authorization may outlive its approval's window: the service's margin to submit it. */
const SUBMIT_SLACK_SECONDS = 60;

/**
 * Where the authorization outlives the window the card shows: signed, it could still be sent after
 * the person saw the approval expire. The service asks for `validBefore` 10 s past `expiresAt`.
 */
function lifetimeMismatches(expiresAt: string, sign: EvmRequest): string[] {
  const ends = Date.parse(expiresAt);
  const raw = sign.typedData.message.validBefore;
  const validBefore = typeof raw === "string" || typeof raw === "number" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(ends)) return ["the approval names no time it ends"];
  if (!Number.isFinite(validBefore) || validBefore > Math.floor(ends / 1000) + SUBMIT_SLACK_SECONDS) {
    const until =
      Number.isFinite(validBefore) && validBefore < 1e11
        ? new Date(validBefore * 1000).toISOString()
        : String(raw);
    return [`stays valid until ${until}, after the approval ends (${expiresAt})`];
  }
  return [];
}
