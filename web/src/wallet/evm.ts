import { createWalletClient, custom, type EIP1193Provider } from "viem";
import { evmSignInWallet, signEvmApproval } from "../../../src/client/index.js";
import type { PageWallet, WalletOption } from "./types.js";

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
  const [address] = await createWalletClient({ transport: custom(provider) }).requestAddresses();
  if (!address) throw new Error(`${meta.name} shared no account`);
  const client = createWalletClient({ account: address, transport: custom(provider) });
  // Signing in names the chain the wallet is on (an EOA's signature holds on any).
  const chainId = Number(await provider.request({ method: "eth_chainId" }).catch(() => "0x1"));
  return {
    ...meta,
    chain: "evm",
    address,
    // personal_sign through viem's wallet client.
    signIn: evmSignInWallet(
      { address, signMessage: ({ message }) => client.signMessage({ message }) },
      `eip155:${Number.isInteger(chainId) ? chainId : 1}`,
    ),
    async approve(payment) {
      const sign = payment.approval?.sign;
      const chainId = sign?.kind === "evm-typed-data" ? Number(sign.typedData.domain.chainId) : Number.NaN;
      await switchToChain(provider, Number.isInteger(chainId) ? chainId : undefined);
      // eth_signTypedData_v4 through viem; the SDK checks the signer is the payment's wallet.
      return signEvmApproval(payment, client);
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
