import { startEvmChain, rawRequest } from "../src/devnet/evm/chain.ts";
import { loadArtifacts } from "../src/devnet/evm/artifacts.ts";
import { createWalletClient, custom, encodeFunctionData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const mode = process.argv[2];
const chain = await startEvmChain("127.0.0.1", { blockIntervalMs: 0 });
const abi = loadArtifacts().contracts.DevUSDC.abi;
const [a] = chain.wallets;
const client = createWalletClient({ account: privateKeyToAccount(a!.privateKey), chain: hardhat, transport: custom(chain.provider) });
const mb = () => { (globalThis as any).gc?.(); const m = process.memoryUsage(); return `native ${((m.rss-m.heapTotal-m.external)/1e6).toFixed(0)}`; };
let nonce = 0;
if (mode === "batched") await rawRequest(chain.provider, "evm_setAutomine", [false]);
console.log(mode, "start", mb());
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < 2000; i++) {
    const to = mode === "same" ? "0x000000000000000000000000000000000000beef" : `0x${(BigInt(nonce * 7919 + 1)).toString(16).padStart(40, "0")}`;
    const p = client.sendTransaction({ to: chain.usdc, nonce: nonce++, gas: 100000n, data: encodeFunctionData({ abi, functionName: "transfer", args: [to, 1n] }) });
    if (mode === "batched") { if (i % 100 === 99) await rawRequest(chain.provider, "evm_mine", []); await p; } else await p;
  }
  console.log(mode, `after ${(round+1)*2000}`, mb());
}
await chain.stop();
process.exit(0);
