import { createGoogle } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { MODEL_ALIASES, type ModelAlias } from "../protocol/models.js";
import { REQUEST_DEFAULTS } from "../protocol/request.js";
import { GOOGLE_DEFAULT_MODELS } from "./google.js";
import { createOfflineModel, type OfflineModelOptions } from "./offline/index.js";

/** Where the public model aliases go. Built from environment variables by the config module. */
export interface ModelConfig {
  /** auto = google when google.apiKey is set, else openai-compatible when its baseURL is set, else offline */
  provider: "auto" | "offline" | "google" | "openai-compatible";
  google: { apiKey?: string; baseURL?: string };
  /** Ollama, vLLM, LM Studio, OpenRouter...: the base URL ends before `/chat/completions`. */
  openaiCompatible: { baseURL?: string; apiKey?: string; name?: string };
  /** Overrides: public alias -> the provider's model id. Unset aliases use the provider's defaults. */
  map: Partial<Record<ModelAlias, string>>;
  /** Stream shape of the built-in offline model (chunk size, delay); defaults suit production. */
  offline?: OfflineModelOptions;
}

export type ProviderName = "offline" | "google" | "openai-compatible";

/** A public alias resolved to a ready model: what the agent streams from and reports in `d:`. */
export interface ResolvedModel {
  model: LanguageModelV4;
  provider: ProviderName;
  modelId: string;
  alias: ModelAlias;
}

export interface ModelRegistry {
  resolve(alias: ModelAlias): ResolvedModel;
  /** The provider every alias resolves to (one provider per process). */
  readonly provider: ProviderName;
  /** alias -> provider and model id, for logs at start and for docs; holds no secrets. */
  describe(): Record<ModelAlias, { provider: string; modelId: string }>;
}

/** Thrown at start when the model configuration cannot work; the message names the setting, never a secret. */
export class ModelConfigError extends Error {
  override name = "ModelConfigError";
}

/**
 * Resolve the three public aliases once, at start, to models of one provider:
 *
 * - `google`: Gemini through `@ai-sdk/google`; needs an API key. Unmapped aliases use
 *   `GOOGLE_DEFAULT_MODELS`.
 * - `openai-compatible`: any `/chat/completions` server; needs a base URL and at least one mapped model
 *   id (no id is common to every server). An unmapped alias uses the id mapped for the default alias
 *   (`aimodel-2.0-flash-exp`), else the only id mapped; so mapping a single alias serves all three
 *   with that one model. Two or more ids mapped, none for the default alias, and an alias left out:
 *   that is an error naming the alias.
 * - `offline`: the built-in deterministic model for every alias (the map does not apply).
 *
 * Provider clients and models are created here, once, not per request. Throws ModelConfigError on an
 * inconsistent configuration, so a bad deployment fails at start rather than on the first chat.
 */
export function createModelRegistry(config: ModelConfig): ModelRegistry {
  const map = checkedMap(config.map);
  const provider = pickProvider(config);
  const models = new Map<ModelAlias, ResolvedModel>();

  if (provider === "offline") {
    const model = createOfflineModel(config.offline);
    for (const alias of MODEL_ALIASES) models.set(alias, { model, provider, modelId: model.modelId, alias });
  } else if (provider === "google") {
    const apiKey = config.google.apiKey?.trim();
    if (!apiKey) {
      throw new ModelConfigError(
        'Model provider "google" needs an API key: set GOOGLE_GENERATIVE_AI_API_KEY (models.google.apiKey).',
      );
    }
    const baseURL = checkedUrl(config.google.baseURL, "GOOGLE_BASE_URL (models.google.baseURL)");
    const google = createGoogle({ apiKey, ...(baseURL ? { baseURL } : {}) });
    for (const alias of MODEL_ALIASES) {
      const modelId = map[alias] ?? GOOGLE_DEFAULT_MODELS[alias];
      models.set(alias, { model: google(modelId), provider, modelId, alias });
    }
  } else {
    const baseURL = checkedUrl(
      config.openaiCompatible.baseURL,
      "OPENAI_COMPATIBLE_BASE_URL (models.openaiCompatible.baseURL)",
    );
    if (!baseURL) {
      throw new ModelConfigError(
        'Model provider "openai-compatible" needs a base URL: set OPENAI_COMPATIBLE_BASE_URL, e.g. http://127.0.0.1:11434/v1 for Ollama.',
      );
    }
    const ids = openAICompatibleIds(map);
    const apiKey = config.openaiCompatible.apiKey?.trim();
    const client = createOpenAICompatible({
      name: config.openaiCompatible.name?.trim() || "openai-compatible",
      baseURL,
      ...(apiKey ? { apiKey } : {}),
    });
    for (const alias of MODEL_ALIASES) {
      const modelId = ids[alias];
      models.set(alias, { model: client.chatModel(modelId), provider, modelId, alias });
    }
  }

  return {
    provider,
    resolve(alias) {
      const resolved = models.get(alias);
      if (!resolved)
        throw new ModelConfigError(
          `Unknown model alias "${String(alias)}"; expected one of ${MODEL_ALIASES.join(", ")}.`,
        );
      return resolved;
    },
    describe() {
      const out = {} as Record<ModelAlias, { provider: string; modelId: string }>;
      for (const [alias, r] of models) out[alias] = { provider: r.provider, modelId: r.modelId };
      return out;
    },
  };
}

function pickProvider(config: ModelConfig): ProviderName {
  switch (config.provider) {
    case "auto":
      if (config.google.apiKey?.trim()) return "google";
      if (config.openaiCompatible.baseURL?.trim()) return "openai-compatible";
      return "offline";
    case "offline":
    case "google":
    case "openai-compatible":
      return config.provider;
    default:
      throw new ModelConfigError(
        `Unknown model provider "${String(config.provider)}"; expected auto, offline, google or openai-compatible (MODEL_PROVIDER).`,
      );
  }
}

/** The map with its keys checked against the aliases and its ids trimmed and non-empty. */
function checkedMap(map: ModelConfig["map"]): Partial<Record<ModelAlias, string>> {
  const out: Partial<Record<ModelAlias, string>> = {};
  for (const [key, value] of Object.entries(map)) {
    if (!isAlias(key)) {
      throw new ModelConfigError(
        `Model map (MODEL_MAP): unknown alias "${key}"; expected one of ${MODEL_ALIASES.join(", ")}.`,
      );
    }
    if (value === undefined) continue;
    const id = typeof value === "string" ? value.trim() : "";
    if (id === "" || /\s/.test(id)) {
      throw new ModelConfigError(`Model map (MODEL_MAP): "${key}" needs a model id without spaces.`);
    }
    out[key] = id;
  }
  return out;
}

function isAlias(value: string): value is ModelAlias {
  return (MODEL_ALIASES as readonly string[]).includes(value);
}

/** An http(s) URL or undefined. The message does not echo the value: it may carry credentials. */
function checkedUrl(value: string | undefined, setting: string): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new ModelConfigError(`${setting} is not a valid URL.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ModelConfigError(`${setting} must be an http(s) URL.`);
  }
  return trimmed.replace(/\/+$/, "");
}

function openAICompatibleIds(map: Partial<Record<ModelAlias, string>>): Record<ModelAlias, string> {
  const distinct = [...new Set(Object.values(map))];
  const fallback = map[REQUEST_DEFAULTS.model] ?? (distinct.length === 1 ? distinct[0] : undefined);
  const out = {} as Record<ModelAlias, string>;
  const missing: ModelAlias[] = [];
  for (const alias of MODEL_ALIASES) {
    const id = map[alias] ?? fallback;
    if (id === undefined) missing.push(alias);
    else out[alias] = id;
  }
  if (distinct.length === 0) {
    throw new ModelConfigError(
      'Model provider "openai-compatible" needs model ids: set MODEL_MAP, e.g. "aimodel-2.0-flash-exp=llama3.1" (one id serves every alias).',
    );
  }
  if (missing.length > 0) {
    throw new ModelConfigError(
      `Model map (MODEL_MAP) has no model id for ${missing.join(", ")} and no id for ${REQUEST_DEFAULTS.model} to fall back to.`,
    );
  }
  return out;
}
