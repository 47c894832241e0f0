/** Options for {@link startDevnet}. Every field is optional; the defaults suit tests. */
export interface DevnetOptions {
  /**
   * Where to write the manifest JSON. Default: `$DEVNET_MANIFEST` or `.data/devnet/manifest.json`
   * (relative to the working directory). `null` writes nothing (tests that need no file).
   */
  manifestPath?: string | null;
  /** Bearer token for the control endpoints. Default: 32 random bytes, hex, new per start. */
  devToken?: string;
  /** Start the Solana node. Default: true when the Solana node (LiteSVM) loads on this machine. */
  solana?: boolean;
  /** Interface every server binds to. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Receives human-readable progress lines. Default: silent. Never receives secrets. */
  log?: (line: string) => void;
}

/** Who a funded wallet is in the demo: payers pay, the merchant is `payTo`, the facilitator pays gas. */
/** `user`: funded, but its key is not handed to the service: it pays by approving in its own wallet. */
export type WalletRole = "payer" | "payer-low" | "merchant" | "facilitator" | "user";

/** A paid demo service, as the manifest and discovery describe it. */
export interface DevnetServiceInfo {
  /** Stable id, e.g. `weather`; fault switches can target it. */
  id: string;
  name: string;
  description: string;
  /** Full URL of the paid endpoint (query parameters are appended by the caller). */
  url: string;
  method: "GET" | "POST";
  /** Price in US dollars as a decimal string, e.g. `"0.01"`. */
  priceUsd: string;
  /** Price in USDC atomic units (6 decimals), e.g. `"10000"`. */
  priceAtomic: string;
  /** CAIP-2 ids of the networks the service accepts payment on. */
  networks: string[];
}

/**
 * Everything a client needs to use the devnet, and nothing secret. Written to disk as JSON
 * (see `docs/devnet.md`) so scripts, the CLI and the web page can find the running network.
 */
export interface DevnetManifest {
  version: 1;
  startedAt: string;
  /** Bearer token for `controlUrl`. A local development credential, not a wallet key. */
  devToken: string;
  /** e.g. `http://127.0.0.1:PORT` */
  facilitatorUrl: string;
  /** `facilitatorUrl + "/discovery/resources"` (bazaar, v2 shape). */
  discoveryUrl: string;
  /** Fault switch endpoint: `GET` reads, `POST` merges, `DELETE` resets (bearer `devToken`). */
  controlUrl: string;
  /**
   * The chat service that runs this devnet (`npm start`), once it listens: where `npm run chat --
   * --devnet` connects. Absent for a devnet started on its own.
   */
  chatUrl?: string;
  services: DevnetServiceInfo[];
  /**
   * Sellers built with the x402 v1 package (`x402-hono` 1.x: JSON 402 with `maxAmountRequired` and
   * a v1 network name, `X-PAYMENT`), one per network that has a v1 name. Not in bazaar discovery
   * (v2 shape). Empty when the v1 package is not installed (a devDependency): see the reason.
   */
  v1Services: DevnetServiceInfo[];
  v1ServicesUnavailableReason?: string;
  evm: {
    network: `eip155:${number}`;
    chainId: number;
    rpcUrl: string;
    usdc: `0x${string}`;
    multicall3: `0x${string}`;
    wallets: Array<{ name: string; address: `0x${string}`; usdcAtomic: string; role: WalletRole }>;
  };
  solana: null | {
    network: string;
    rpcUrl: string;
    wsUrl: string;
    usdcMint: string;
    wallets: Array<{ name: string; address: string; usdcAtomic: string; role: WalletRole }>;
  };
  /** Why `solana` is null (platform without the native module, or disabled by option). */
  solanaUnavailableReason?: string;
}

/**
 * Failure modes the devnet can simulate. All are off by default; see `docs/devnet.md`.
 * They act on the devnet's own servers only, never on the chains' RPC endpoints.
 */
export interface Faults {
  /**
   * Paid services unreachable: `"refuse"` closes their listeners (connection refused),
   * `"503"` answers 503 Service Unavailable, a list of service ids answers 503 for those only.
   */
  serviceDown: null | "refuse" | "503" | string[];
  /** The facilitator closes its listener (`"refuse"`) or answers 503 on every route but control. */
  facilitatorDown: null | "refuse" | "503";
  /** Extra delay before the facilitator settles, in milliseconds. */
  settleDelayMs: number;
  /** `/settle` answers `success: false` (`errorReason: "devnet_settle_fault"`) and sends nothing. */
  settleFail: boolean;
  /** `/settle` settles on chain, then never answers (until the fault is reset or the devnet stops). */
  settleHangAfterChain: boolean;
  /**
   * `/settle` holds the request before touching the chain until the switch is turned off, then
   * settles on chain and answers: the payer, long gone, sees a timeout, and the money moves later.
   */
  settleLate: boolean;
  /**
   * Services re-quote: every quote after the first one a service gives is `multiplier` times
   * the list price, so a client paying the first 402 gets a second 402 at the higher price.
   */
  requoteMultiplier: number | null;
}

/** The running devnet, as returned in-process by {@link startDevnet}. */
export interface Devnet {
  manifest: DevnetManifest;
  /**
   * Funded wallets' secret keys, keyed by wallet name: EVM private keys (hex) and Solana
   * 64-byte secret keys (seed + public key). Public test keys, but never serialized or logged.
   */
  secrets: { evm: Record<string, `0x${string}`>; solana: Record<string, Uint8Array> };
  /** Fault switches; also reachable over HTTP at `manifest.controlUrl`. */
  faults: { set(f: Partial<Faults>): void; reset(): void; get(): Faults };
  /**
   * Records the chat service's URL in the manifest (`chatUrl`) and rewrites the file if this devnet
   * wrote one, so the terminal chat's `--devnet` finds the service.
   */
  announceChatUrl(url: string): Promise<void>;
  /**
   * The id of the process the EVM chain runs in (its memory is the devnet's too; a renewal of the
   * chain starts another). It ends with the devnet, or with this process however that ends.
   */
  evmChainPid(): number;
  /** Stops every server and node; ports are free when the promise resolves. Idempotent. */
  stop(): Promise<void>;
}
