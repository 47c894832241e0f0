import { startEvmChain, rawRequest } from "../src/devnet/evm/chain.ts";
import { loadArtifacts } from "../src/devnet/evm/artifacts.ts";
import { createWalletClient, custom, encodeFunctionData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const chain = await startEvmChain("127.0.0.1", { blockIntervalMs: 0 });
const abi = loadArtifacts().contracts.DevUSDC.abi;
const [a, b] = chain.wallets;
const client = createWalletClient({ account: privateKeyToAccount(a!.privateKey), chain: hardhat, transport: custom(chain.provider) });
const mb = () => { (globalThis as any).gc?.(); const m = process.memoryUsage(); return `rss ${(m.rss/1e6).toFixed(0)} heap ${(m.heapUsed/1e6).toFixed(0)} ext ${(m.external/1e6).toFixed(0)} native ${((m.rss-m.heapTotal-m.external)/1e6).toFixed(0)}`; };
let nonce = 0;
async function burst(n: number) {
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    await client.sendTransaction({
      to: chain.usdc, nonce: nonce++, gas: 100000n,
      data: encodeFunctionData({ abi, functionName: "transfer", args: [`0x${(BigInt(nonce * 7919 + 1)).toString(16).padStart(40, "0")}`, 1n] }) });
  }
  return ((performance.now() - t) / n).toFixed(2);
}
console.log("start", mb());
for (let round = 0; round < 3; round++) {
  const ms = await burst(2000);
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`after 2000 more (round ${round}) ${ms} ms/tx`, mb());
}
await rawRequest(chain.provider, "hardhat_reset", []);
await new Promise((r) => setTimeout(r, 2000));
console.log("after hardhat_reset", mb());
nonce = 0;
for (let round = 0; round < 2; round++) {
  // contract is gone after reset; send plain value transfers instead
  const t = performance.now();
  for (let i = 0; i < 2000; i++) await client.sendTransaction({ to: b!.address, value: 1n, nonce: nonce++ });
  console.log(`after 2000 plain (round ${round})`, ((performance.now()-t)/2000).toFixed(2), mb());
}
await chain.stop();
process.exit(0);
