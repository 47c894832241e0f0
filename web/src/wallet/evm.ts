import { createWalletClient, custom, type EIP1193Provider, type TypedDataDefinition } from "viem";
import type { PaymentUpdate } from "../chat/types.js";
import type { PageWallet, WalletOption } from "./types.js";

/**
 * The approval's EIP-712 typed data as viem signs it: uint and int values (decimal strings on the
 * wire) become bigints, and the domain's chain id a number. `eth_signTypedData_v4` receives the same.
 */
export function typedDataOf(payment: PaymentUpdate): TypedDataDefinition {
  const sign = payment.approval?.sign;
  if (sign?.kind !== "evm-typed-data") throw new Error("this payment asks for no EVM signature");
  const { domain, types, primaryType, message } = sign.typedData;
  const fields = types[primaryType] ?? [];
  const converted: Record<string, unknown> = { ...message };
  for (const field of fields) {
    const value = converted[field.name];
    if (/^u?int\d*$/.test(field.type) && (typeof value === "string" || typeof value === "number"))
      converted[field.name] = BigInt(value);
  }
  const chainId = domain.chainId;
  return {
    domain: { ...domain, ...(chainId !== undefined ? { chainId: Number(chainId) } : {}) },
    types,
    primaryType,
    message: converted,
  } as unknown as TypedDataDefinition;
}

/** Ask the wallet to use the payment's chain; a wallet that cannot switch may still sign. */
async function switchToChain(provider: EIP1193Provider, chainId: number | undefined): Promise<void> {
  if (chainId === undefined) return;
  try {
    const current = await provider.request({ method: "eth_chainId" });
    if (Number(current) === chainId) return;
    await provider.request({
      method: "wallet_switchEthereumChain",
      params: [{ chainId: `0x${chainId.toString(16)}` }],
    });
  } catch {
    // Unknown chain, or no switching: signing goes on, and the wallet says no if it must.
  }
}

/** Connect an EIP-1193 provider (asks for accounts) and sign approvals with viem's wallet client. */
export async function connectEip1193(
  provider: EIP1193Provider,
  meta: { optionId: string; name: string; icon?: string },
): Promise<PageWallet> {
  const client = createWalletClient({ transport: custom(provider) });
  const [address] = await client.requestAddresses();
  if (!address) throw new Error(`${meta.name} shared no account`);
  return {
    ...meta,
    chain: "evm",
    address,
    async approve(payment) {
      const typedData = typedDataOf(payment);
      await switchToChain(provider, typedData.domain?.chainId as number | undefined);
      const signature = await client.signTypedData({ account: address, ...typedData });
      return { paymentId: payment.paymentId, signature };
    },
  };
}

interface Eip6963Detail {
  info: { uuid: string; name: string; icon: string; rdns: string };
  provider: EIP1193Provider;
}

/**
 * EIP-6963: every wallet extension announces itself; `onChange` gets the list as it grows. Without
 * any announcement, `window.ethereum` (the older single-wallet injection) is offered instead.
 */
export function discoverEvmWallets(onChange: (options: WalletOption[]) => void): () => void {
  const found = new Map<string, Eip6963Detail>();
  const publish = () => {
    const options: WalletOption[] = [...found.values()].map(({ info, provider }) => ({
      id: `eip6963:${info.rdns || info.uuid}`,
      name: info.name,
      icon: info.icon,
      chain: "evm",
      source: "eip6963",
      connect: () =>
        connectEip1193(provider, {
          optionId: `eip6963:${info.rdns || info.uuid}`,
          name: info.name,
          icon: info.icon,
        }),
    }));
    const injected = (window as { ethereum?: EIP1193Provider }).ethereum;
    if (options.length === 0 && injected) {
      options.push({
        id: "injected",
        name: "Browser wallet",
        chain: "evm",
        source: "injected",
        connect: () => connectEip1193(injected, { optionId: "injected", name: "Browser wallet" }),
      });
    }
    onChange(options);
  };
  const onAnnounce = (event: Event) => {
    const detail = (event as CustomEvent<Eip6963Detail>).detail;
    if (!detail?.info || !detail.provider) return;
    found.set(detail.info.uuid, detail);
    publish();
  };
  window.addEventListener("eip6963:announceProvider", onAnnounce);
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  publish();
  return () => window.removeEventListener("eip6963:announceProvider", onAnnounce);
}
