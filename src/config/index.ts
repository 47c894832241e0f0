import { existsSync } from "node:fs";
import { z } from "zod/v4";
import { defaultUsdc } from "../chains/index.js";
import type { ModelAlias } from "../protocol/index.js";
import { ConfigError } from "./errors.js";
import { bool, int, optionalString, url, usd, withoutBlanks } from "./fields.js";
import { type JwtConfig, parseJwtConfig } from "./jwt.js";
import { list, pairs, parseModelMap, parseTokens } from "./lists.js";
import { parseAllowedServices, parseOrigins, parsePublicUrl, parseServiceOrigins } from "./origins.js";
import { TAB_FIELDS, type TabsConfig, tabsConfig } from "./tabs.js";
import { checkTokensApart } from "./tokens.js";

export { ConfigError } from "./errors.js";
export { withoutBlanks } from "./fields.js";
export type { JwtConfig } from "./jwt.js";
export { approvalUrl, parseOrigins, parsePublicUrl } from "./origins.js";

/**
 * Configuration comes from environment variables (a `.env` file in the working directory is read
 * first when present; real environment variables win). Everything is validated at start, and a bad
 * value stops the process with a message naming the variable.
 */
export interface Config {
  port: number;
  host: string;
  /** This service's public origin (PUBLIC_URL): approval URLs are `${publicUrl}/approve/<paymentId>`. */
  publicUrl: string;
  /** Whole-request deadline (seed: 50 s). */
  requestTimeoutMs: number;
  /** On SIGTERM, how long open streams may keep running before they are ended. */
  shutdownGraceMs: number;
  /** Upper bound of model steps (tool round trips) in one turn. */
  maxSteps: number;
  /** SSE heartbeat interval while a stream is idle. */
  heartbeatMs: number;
  /** The lease of an idempotency claim: renewed while its attempt runs, taken over once it lapses. */
  idempotencyLeaseMs: number;
  /** How many proxies in front append to X-Forwarded-For (0: the header is not read). */
  trustProxy: number;
  rateLimit: {
    /** Per window, to a caller with a bearer identity. */
    points: number;
    /** Per window, to an anonymous caller (a wallet, an IP): at most `points`. */
    anonymousPoints: number;
    durationS: number;
    blockS: number;
    redisUrl?: string;
  };
  /** Bearer tokens (AUTH_TOKENS), whether one is required, and bearer JWTs from an identity provider. */
  auth: { tokens: Map<string, string>; required: boolean; jwt?: JwtConfig };
  /** Origins whose pages may call the API from a browser (CORS_ORIGINS); none: same-origin only. */
  cors: { origins: string[] };
  models: {
    provider: "auto" | "offline" | "google" | "openai-compatible";
    google: { apiKey?: string; baseURL?: string };
    openaiCompatible: { baseURL?: string; apiKey?: string; name?: string };
    map: Partial<Record<ModelAlias, string>>;
  };
  payments: PaymentsEnv;
  /** The bearer token of GET /metrics (METRICS_TOKEN); absent: no such route. */
  metricsToken?: string;
  /**
   * OPERATOR_TOKEN: guards /api/operator/* (docs/deploy.md#operating-it). Unset: the service makes
   * one at start and writes it to `<DATA_DIR>/operator-token` (mode 0600) for the CLI.
   */
  operatorToken?: string;
}

/** Payment settings as configured (docs/configuration in README). Amounts are atomic USD units. */
export interface PaymentsEnv {
  /** devnet: start the embedded local x402 network and pay there; external: use the settings below; off: no tools. */
  mode: "devnet" | "external" | "off";
  databaseUrl?: string;
  /** PostgreSQL schema for the tables (default public); tests use one each. */
  databaseSchema?: string;
  /** Where embedded data lives (PGlite under `<dataDir>/pglite`); "memory://" keeps it in memory. */
  dataDir: string;
  discoveryUrls: string[];
  catalogFile?: string;
  /** CAIP-2 network -> RPC URL. */
  rpcUrls: Record<string, string>;
  /** CAIP-2 network -> allowed USDC asset addresses / mints (defaults: Circle's USDC on known networks). */
  assets: Record<string, string[]>;
  preferredNetworks: string[];
  signersFile?: string;
  limits: {
    defaults: { perTransaction: bigint; perRequest: bigint; daily: bigint };
    caps: { perTransaction: bigint; perRequest: bigint; daily: bigint };
    allowedNetworks?: string[];
    allowedServices: string[] | "any";
    /** Payments above this ask the user's wallet even when a delegated key could sign (APPROVAL_ABOVE_USD). */
    approvalAbove?: bigint;
  };
  allowPrivateOrigins: string[];
  maxTimeoutSeconds: number;
  minTimeLeftMs: number;
  serviceTimeoutMs: number;
  reconcileIntervalMs: number;
  /** The key quote ids are signed with (QUOTE_SECRET); absent: random per process. */
  quoteSecret?: string;
  /** Tabs (docs/payments.md#tabs): where their transfers settle, their bounds, their keys' secret. */
  tabs: TabsConfig;
}

/** USDC on networks people use, from the x402 SDK's own tables (src/chains); ASSETS adds or replaces entries. */
export const KNOWN_USDC: Readonly<Record<string, string[]>> = defaultUsdc();

const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  PUBLIC_URL: optionalString,
  REQUEST_TIMEOUT_MS: int(100, 900_000).default(50_000),
  SHUTDOWN_GRACE_MS: int(0, 900_000).default(10_000),
  MAX_STEPS: int(1, 32).default(8),
  HEARTBEAT_MS: int(100, 120_000).default(15_000),
  IDEMPOTENCY_LEASE_MS: int(1_000, 600_000).default(10_000),
  // true (one proxy), false, or how many proxies in front each append to X-Forwarded-For.
  TRUST_PROXY: z
    .union([bool.transform((on) => (on ? 1 : 0)), z.coerce.number().int().min(0).max(10)])
    .default(0),
  // Sized for agents (docs/mcp.md#session): a caller with a bearer identity runs several MCP
  // sessions at once; anonymous callers (a wallet named, or an IP) keep today's tight quota.
  RATE_LIMIT_POINTS: int(1, 1_000_000).default(120),
  RATE_LIMIT_ANONYMOUS_POINTS: int(1, 1_000_000).default(20),
  RATE_LIMIT_DURATION_S: int(1, 86_400).default(60),
  RATE_LIMIT_BLOCK_S: int(1, 86_400).default(50),
  REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  AUTH_TOKENS: optionalString,
  REQUIRE_AUTH: bool.default(false),
  JWKS_URL: optionalString.pipe(url),
  JWT_ISSUER: optionalString,
  JWT_AUDIENCE: optionalString,
  JWT_CALLER_CLAIM: z.string().trim().min(1).default("sub"),
  JWT_LIMITS_CLAIM: optionalString,
  CORS_ORIGINS: optionalString,
  MODEL_PROVIDER: z.enum(["auto", "offline", "google", "openai-compatible"]).default("auto"),
  GOOGLE_GENERATIVE_AI_API_KEY: optionalString,
  GOOGLE_BASE_URL: optionalString.pipe(url),
  OPENAI_COMPATIBLE_BASE_URL: optionalString.pipe(url),
  OPENAI_COMPATIBLE_API_KEY: optionalString,
  OPENAI_COMPATIBLE_NAME: optionalString,
  MODEL_MAP: optionalString,
  PAYMENTS: z.enum(["devnet", "external", "off"]).default("devnet"),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATABASE_SCHEMA: optionalString.pipe(
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .optional(),
  ),
  DATA_DIR: z.string().min(1).default(".data"),
  DISCOVERY_URLS: optionalString,
  CATALOG_FILE: optionalString,
  RPC_URLS: optionalString,
  ASSETS: optionalString,
  PREFERRED_NETWORKS: optionalString,
  SIGNERS_FILE: optionalString,
  LIMIT_PER_TRANSACTION: usd.prefault("1"),
  LIMIT_PER_REQUEST: usd.prefault("2"),
  LIMIT_DAILY: usd.prefault("10"),
  CAP_PER_TRANSACTION: usd.prefault("100"),
  CAP_PER_REQUEST: usd.prefault("100"),
  CAP_DAILY: usd.prefault("1000"),
  APPROVAL_ABOVE_USD: usd.optional(),
  ALLOWED_NETWORKS: optionalString,
  ALLOWED_SERVICES: optionalString,
  ALLOW_PRIVATE_ORIGINS: optionalString,
  MAX_TIMEOUT_SECONDS: int(6, 3600).default(600),
  MIN_TIME_LEFT_MS: int(0, 600_000).default(12_000),
  SERVICE_TIMEOUT_MS: int(100, 600_000).default(10_000),
  RECONCILE_INTERVAL_MS: int(100, 86_400_000).default(30_000),
  QUOTE_SECRET: optionalString.refine((v) => !v || v.length >= 32, "at least 32 characters"),
  ...TAB_FIELDS,
  METRICS_TOKEN: optionalString.refine((v) => !v || v.length >= 16, "at least 16 characters"),
  OPERATOR_TOKEN: optionalString.refine((v) => !v || v.length >= 32, "at least 32 characters"),
});

/** Build the configuration from an environment (process.env by default). Throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(withoutBlanks(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.PAYMENTS === "devnet" && e.SIGNERS_FILE) {
    // The embedded devnet signs with its own wallets: a signers file would be silently unused.
    throw new ConfigError(
      "Invalid configuration:\n  SIGNERS_FILE: is used only with PAYMENTS=external (with PAYMENTS=devnet, the default, the devnet's own wallets sign for its dev token); unset SIGNERS_FILE or set PAYMENTS=external",
    );
  }
  if (e.PAYMENTS !== "off") checkDeadlineBudget(e);
  checkTokensApart(e.AUTH_TOKENS, { OPERATOR_TOKEN: e.OPERATOR_TOKEN, METRICS_TOKEN: e.METRICS_TOKEN });
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: parsePublicUrl(e.PUBLIC_URL, e.HOST, e.PORT),
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    maxSteps: e.MAX_STEPS,
    heartbeatMs: e.HEARTBEAT_MS,
    idempotencyLeaseMs: e.IDEMPOTENCY_LEASE_MS,
    trustProxy: e.TRUST_PROXY,
    rateLimit: {
      points: e.RATE_LIMIT_POINTS,
      anonymousPoints: Math.min(e.RATE_LIMIT_ANONYMOUS_POINTS, e.RATE_LIMIT_POINTS),
      durationS: e.RATE_LIMIT_DURATION_S,
      blockS: e.RATE_LIMIT_BLOCK_S,
      ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
    },
    auth: { tokens: parseTokens(e.AUTH_TOKENS), required: e.REQUIRE_AUTH, ...jwtOf(e) },
    cors: { origins: parseOrigins(list(e.CORS_ORIGINS)) },
    models: {
      provider: e.MODEL_PROVIDER,
      google: { apiKey: e.GOOGLE_GENERATIVE_AI_API_KEY, baseURL: e.GOOGLE_BASE_URL },
      openaiCompatible: {
        baseURL: e.OPENAI_COMPATIBLE_BASE_URL,
        apiKey: e.OPENAI_COMPATIBLE_API_KEY,
        name: e.OPENAI_COMPATIBLE_NAME,
      },
      map: parseModelMap(e.MODEL_MAP),
    },
    payments: paymentsEnv(e),
    ...(e.METRICS_TOKEN ? { metricsToken: e.METRICS_TOKEN } : {}),
    ...(e.OPERATOR_TOKEN ? { operatorToken: e.OPERATOR_TOKEN } : {}),
  };
}

/**
 * The stream's deadline must hold whatever the configuration: a payment starts only with at least
 * MIN_TIME_LEFT_MS left, so that the paid call (bounded by SERVICE_TIMEOUT_MS) fits before the
 * deadline, and a payment must be able to start at all. A configuration that breaks this is refused.
 */
function checkDeadlineBudget(e: z.infer<typeof envSchema>): void {
  const problems: string[] = [];
  if (e.SERVICE_TIMEOUT_MS >= e.MIN_TIME_LEFT_MS) {
    problems.push(
      `  SERVICE_TIMEOUT_MS (${e.SERVICE_TIMEOUT_MS}) must be below MIN_TIME_LEFT_MS (${e.MIN_TIME_LEFT_MS}): a paid call must fit in the time a payment is guaranteed`,
    );
  }
  if (e.MIN_TIME_LEFT_MS >= e.REQUEST_TIMEOUT_MS) {
    problems.push(
      `  MIN_TIME_LEFT_MS (${e.MIN_TIME_LEFT_MS}) must be below REQUEST_TIMEOUT_MS (${e.REQUEST_TIMEOUT_MS}): otherwise no payment can ever start`,
    );
  }
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid configuration (the request deadline could not be kept; PAYMENTS=off skips this check):\n${problems.join("\n")}`,
    );
  }
}

function jwtOf(e: z.infer<typeof envSchema>): { jwt?: JwtConfig } {
  const jwt = parseJwtConfig(e);
  return jwt ? { jwt } : {};
}

function paymentsEnv(e: z.infer<typeof envSchema>): PaymentsEnv {
  const assets: Record<string, string[]> = { ...KNOWN_USDC };
  for (const [network, asset] of pairs(e.ASSETS, "ASSETS")) assets[network] = [asset];
  const allowedNetworks = list(e.ALLOWED_NETWORKS);
  return {
    mode: e.PAYMENTS,
    ...(e.DATABASE_URL ? { databaseUrl: e.DATABASE_URL } : {}),
    ...(e.DATABASE_SCHEMA ? { databaseSchema: e.DATABASE_SCHEMA } : {}),
    dataDir: e.DATA_DIR,
    discoveryUrls: list(e.DISCOVERY_URLS),
    ...(e.CATALOG_FILE ? { catalogFile: e.CATALOG_FILE } : {}),
    rpcUrls: Object.fromEntries(pairs(e.RPC_URLS, "RPC_URLS")),
    assets,
    preferredNetworks: list(e.PREFERRED_NETWORKS),
    ...(e.SIGNERS_FILE ? { signersFile: e.SIGNERS_FILE } : {}),
    limits: {
      defaults: {
        perTransaction: e.LIMIT_PER_TRANSACTION,
        perRequest: e.LIMIT_PER_REQUEST,
        daily: e.LIMIT_DAILY,
      },
      caps: { perTransaction: e.CAP_PER_TRANSACTION, perRequest: e.CAP_PER_REQUEST, daily: e.CAP_DAILY },
      ...(allowedNetworks.length > 0 ? { allowedNetworks } : {}),
      allowedServices: parseAllowedServices(list(e.ALLOWED_SERVICES)),
      ...(e.APPROVAL_ABOVE_USD !== undefined ? { approvalAbove: e.APPROVAL_ABOVE_USD } : {}),
    },
    allowPrivateOrigins: parseServiceOrigins(list(e.ALLOW_PRIVATE_ORIGINS), "ALLOW_PRIVATE_ORIGINS"),
    maxTimeoutSeconds: e.MAX_TIMEOUT_SECONDS,
    minTimeLeftMs: e.MIN_TIME_LEFT_MS,
    serviceTimeoutMs: e.SERVICE_TIMEOUT_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    ...(e.QUOTE_SECRET ? { quoteSecret: e.QUOTE_SECRET } : {}),
    tabs: tabsConfig(e),
  };
}

/** Read `.env` from the working directory into process.env (existing variables win). */
export function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
