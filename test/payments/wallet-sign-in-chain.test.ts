import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { signInMessage } from "../../src/client/index.js";
import { MemorySignInStore } from "../../src/signin/memory.js";
import { WalletSignIn } from "../../src/signin/sign-in.js";

/**
 * A sign-in whose chain cannot be read spends nothing: a signature that is not the address's own
 * key (a contract wallet's, maybe) needs the chain's word, and while its RPC fails the nonce is
 * given back, so the same signed message can be sent again.
 */
const EVM = "eip155:31337";
let rpcUrl: string;
let closeRpc: () => Promise<void>;

beforeAll(async () => {
  // An RPC that answers every call with a 503: the chain cannot be read.
  const server = createServer((_req, res) => res.writeHead(503).end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeRpc = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(() => closeRpc());

it("gives the nonce back when the chain cannot judge the signature", async () => {
  const store = new MemorySignInStore();
  const signIn = new WalletSignIn({ publicUrl: "http://service.test", store, rpcUrls: { [EVM]: rpcUrl } });
  const wallet = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());
  const { message: _text, ...fields } = await signIn.challenge({ address: wallet.address, chainId: EVM });
  // Signed by another key: only the chain (EIP-1271) could say it is the wallet's.
  const body = { ...fields, signature: await other.signMessage({ message: signInMessage(fields) }) };
  await expect(signIn.signIn(body)).rejects.toMatchObject({ code: "signin_chain_unavailable" });
  // Again: the nonce was not spent, so the chain is asked again rather than the nonce refused.
  await expect(signIn.signIn(body)).rejects.toMatchObject({ code: "signin_chain_unavailable" });
});
