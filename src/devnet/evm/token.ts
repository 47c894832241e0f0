import {
  type Address,
  createWalletClient,
  custom,
  type EIP1193Provider,
  type Hex,
  publicActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { DEPLOYER_KEY, type evmWallets } from "./accounts.js";
import { loadArtifacts } from "./artifacts.js";
import { rawRequest } from "./edr.js";

/** Where every chain has Multicall3; x402's facilitator diagnoses failures through it. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** The deployer (the token's minter) on `provider`. */
export function deployerClient(provider: EIP1193Provider) {
  return createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    chain: hardhat,
    transport: custom(provider),
  }).extend(publicActions);
}

/**
 * Multicall3 planted, the token deployed (the deployer's first transaction, so always at the same
 * address on a new chain) and, given wallets, their starting USDC minted. Returns the token.
 */
export async function deployContracts(
  provider: EIP1193Provider,
  wallets: ReturnType<typeof evmWallets> = [],
): Promise<Address> {
  const { contracts } = loadArtifacts();
  const client = deployerClient(provider);
  await rawRequest(provider, "hardhat_setCode", [MULTICALL3_ADDRESS, contracts.Multicall3.deployedBytecode]);
  const deployHash = await client.deployContract({
    abi: contracts.DevUSDC.abi,
    bytecode: contracts.DevUSDC.bytecode,
  });
  const receipt = await client.waitForTransactionReceipt({ hash: deployHash });
  const usdc = receipt.contractAddress;
  if (!usdc) throw new Error("DevUSDC deployment produced no contract address");
  for (const wallet of wallets) {
    if (wallet.usdcAtomic > 0n) await mint(provider, usdc, wallet.address, wallet.usdcAtomic);
  }
  return usdc;
}

/** Mints `amount` of the token to `to` from the deployer (the token's owner), and waits for it. */
export async function mint(
  provider: EIP1193Provider,
  usdc: Address,
  to: Address,
  amount: bigint,
): Promise<void> {
  const client = deployerClient(provider);
  const hash: Hex = await client.writeContract({
    address: usdc,
    abi: loadArtifacts().contracts.DevUSDC.abi,
    functionName: "mint",
    args: [to, amount],
  });
  await client.waitForTransactionReceipt({ hash });
}
