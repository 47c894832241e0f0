import { existsSync } from "node:fs";
import { z } from "zod/v4";
import { MODEL_ALIASES, type ModelAlias } from "../protocol/index.js";

/**
 * Configuration comes from environment variables (a `.env` file in the working directory is read
 * first when present; real environment variables win). Everything is validated at start, and a bad
 * value stops the process with a message naming the variable.
 */
export interface Config {
  port: number;
  host: string;
  /** Whole-request deadline (seed: 50 s). */
  requestTimeoutMs: number;
  /** On SIGTERM, how long open streams may keep running before they are ended. */
  shutdownGraceMs: number;
  /** Upper bound of model steps (tool round trips) in one turn. */
  maxSteps: number;
  /** SSE heartbeat interval while a stream is idle. */
  heartbeatMs: number;
  trustProxy: boolean;
  rateLimit: { points: number; durationS: number; blockS: number; redisUrl?: string };
  auth: { tokens: Map<string, string>; required: boolean };
  models: {
    provider: "auto" | "offline" | "google" | "openai-compatible";
    google: { apiKey?: string; baseURL?: string };
    openaiCompatible: { baseURL?: string; apiKey?: string; name?: string };
    map: Partial<Record<ModelAlias, string>>;
  };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
const url = z.url({ protocol: /^https?$/ }).optional();

const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  REQUEST_TIMEOUT_MS: int(100, 900_000).default(50_000),
  SHUTDOWN_GRACE_MS: int(0, 900_000).default(10_000),
  MAX_STEPS: int(1, 32).default(8),
  HEARTBEAT_MS: int(100, 120_000).default(15_000),
  TRUST_PROXY: bool.default(false),
  RATE_LIMIT_POINTS: int(1, 1_000_000).default(20),
  RATE_LIMIT_DURATION_S: int(1, 86_400).default(60),
  RATE_LIMIT_BLOCK_S: int(1, 86_400).default(50),
  REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  AUTH_TOKENS: optionalString,
  REQUIRE_AUTH: bool.default(false),
  MODEL_PROVIDER: z.enum(["auto", "offline", "google", "openai-compatible"]).default("auto"),
  GOOGLE_GENERATIVE_AI_API_KEY: optionalString,
  GOOGLE_BASE_URL: optionalString.pipe(url),
  OPENAI_COMPATIBLE_BASE_URL: optionalString.pipe(url),
  OPENAI_COMPATIBLE_API_KEY: optionalString,
  OPENAI_COMPATIBLE_NAME: optionalString,
  MODEL_MAP: optionalString,
});

/** Parse `name=token,name2=token2` into token -> identity. */
function parseTokens(raw: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  if (!raw) return tokens;
  for (const entry of raw.split(",")) {
    const [name, token] = entry.split("=").map((s) => s.trim());
    if (!name || !token || token.length < 16) {
      throw new ConfigError(
        "AUTH_TOKENS: expected name=token pairs separated by commas, tokens of 16+ characters",
      );
    }
    tokens.set(token, name);
  }
  return tokens;
}

/** Parse `alias=model-id,alias2=model-id2`. */
function parseModelMap(raw: string | undefined): Partial<Record<ModelAlias, string>> {
  const map: Partial<Record<ModelAlias, string>> = {};
  if (!raw) return map;
  for (const entry of raw.split(",")) {
    const [alias, id] = entry.split("=").map((s) => s.trim());
    if (!alias || !id || !(MODEL_ALIASES as readonly string[]).includes(alias)) {
      throw new ConfigError(
        `MODEL_MAP: expected alias=model-id pairs with aliases among ${MODEL_ALIASES.join(", ")}`,
      );
    }
    map[alias as ModelAlias] = id;
  }
  return map;
}

/** Build the configuration from an environment (process.env by default). Throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    maxSteps: e.MAX_STEPS,
    heartbeatMs: e.HEARTBEAT_MS,
    trustProxy: e.TRUST_PROXY,
    rateLimit: {
      points: e.RATE_LIMIT_POINTS,
      durationS: e.RATE_LIMIT_DURATION_S,
      blockS: e.RATE_LIMIT_BLOCK_S,
      ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
    },
    auth: { tokens: parseTokens(e.AUTH_TOKENS), required: e.REQUIRE_AUTH },
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
  };
}

/** Read `.env` from the working directory into process.env (existing variables win). */
export function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
