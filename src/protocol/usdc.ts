/**
 * Circle's USDC by CAIP-2 network: what a wallet-side check holds a signing request against, so that
 * a client need not take the service's word for which token a signature moves (the client SDK's
 * `describeApproval`, the Solana checks before a wallet signs). The same entries as the x402 SDK's
 * default assets that the service accepts (src/chains `defaultUsdc()`, kept equal by
 * usdc.test.ts); written out here so that the client carries no x402 package.
 *
 * A network not listed (a local chain, an operator's `ASSETS` for a network the SDK does not know)
 * has no known USDC: its token is not checked, only that the request is for that network.
 */
export const KNOWN_USDC: Readonly<Record<string, readonly string[]>> = {
  "eip155:1": ["0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"],
  "eip155:8453": ["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"],
  "eip155:84532": ["0x036CbD53842c5426634e7929541eC2318f3dCF7e"],
  "eip155:43114": ["0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"],
  "eip155:143": ["0x754704Bc059F8C67012fEd69BC8A327a5aafb603"],
  "eip155:137": ["0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"],
  "eip155:42161": ["0xaf88d065e77c8cC2239327C5EDb3A432268e5831"],
  "eip155:421614": ["0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d"],
  "eip155:36900": ["0x9cb8142aEBBcdc60AF7c97Af897A67A8f3CA71C2"],
  "eip155:190415": ["0x401eCb1D350407f13ba348573E5630B83638E30D"],
  "eip155:181228": ["0x401eCb1D350407f13ba348573E5630B83638E30D"],
  "eip155:50": ["0xfA2958CB79b0491CC627c1557F441eF849Ca8eb1"],
  "eip155:51": ["0xb5AB69F7bBada22B28e79C8FFAECe55eF1c771D4"],
  "eip155:42220": ["0xcebA9300f2b948710d2653dD7B07f33A8B32118C"],
  "eip155:11142220": ["0x01C5C0122039549AD1493B8220cABEdD739BC44E"],
  "eip155:1329": ["0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392"],
  "eip155:1328": ["0x4fCF1784B31630811181f670Aea7A7bEF803eaED"],
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": ["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"],
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": ["4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"],
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": ["4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"],
};

/**
 * Why `asset` on `network` is not USDC, in words for a person; undefined when it is, or when the
 * network has no known USDC (then nothing here can say). EVM addresses compare without case.
 */
export function notUsdc(network: string, asset: string): string | undefined {
  const known = Object.hasOwn(KNOWN_USDC, network) ? KNOWN_USDC[network] : undefined;
  if (!known) return undefined;
  const key = (a: string) => (a.startsWith("0x") ? a.toLowerCase() : a);
  return known.some((a) => key(a) === key(asset)) ? undefined : `moves the token ${asset}, not USDC`;
}

/** An EVM network's chain id from its CAIP-2 id (`eip155:8453` → 8453), undefined for any other. */
export function evmChainId(network: string): number | undefined {
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(network);
  return match ? Number(match[1]) : undefined;
}
