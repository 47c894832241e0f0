import { describe, expect, it } from "vitest";
import { MODEL_ALIASES } from "../protocol/models.js";
import { createModelRegistry, GOOGLE_DEFAULT_MODELS, type ModelConfig, ModelConfigError } from "./index.js";

function config(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return { provider: "auto", google: {}, openaiCompatible: {}, map: {}, ...overrides };
}

describe("createModelRegistry", () => {
  it("auto with nothing configured: every alias resolves to the offline model", () => {
    const registry = createModelRegistry(config());
    expect(registry.provider).toBe("offline");
    for (const alias of MODEL_ALIASES) {
      const resolved = registry.resolve(alias);
      expect(resolved).toMatchObject({ provider: "offline", modelId: "offline-1", alias });
      expect(resolved.model.specificationVersion).toBe("v4");
      expect(resolved.model.provider).toBe("offline");
    }
  });

  it("auto with a Google key: Gemini with the default ids, map overrides win", () => {
    const registry = createModelRegistry(
      config({ google: { apiKey: "test-key" }, map: { "aimodel-1.5-pro": "gemini-3-pro-preview" } }),
    );
    expect(registry.provider).toBe("google");
    expect(registry.describe()).toEqual({
      "aimodel-2.0-flash-exp": {
        provider: "google",
        modelId: GOOGLE_DEFAULT_MODELS["aimodel-2.0-flash-exp"],
      },
      "aimodel-1.5-pro": { provider: "google", modelId: "gemini-3-pro-preview" },
      "aimodel-1.5-flash": { provider: "google", modelId: GOOGLE_DEFAULT_MODELS["aimodel-1.5-flash"] },
    });
    const resolved = registry.resolve("aimodel-1.5-pro");
    expect(resolved.model.modelId).toBe("gemini-3-pro-preview");
    expect(resolved.model.provider).toContain("google");
  });

  it("auto prefers Google over an OpenAI-compatible base URL", () => {
    const registry = createModelRegistry(
      config({ google: { apiKey: "k" }, openaiCompatible: { baseURL: "http://127.0.0.1:11434/v1" } }),
    );
    expect(registry.provider).toBe("google");
  });

  it("auto with an OpenAI-compatible base URL: one mapped id serves every alias", () => {
    const registry = createModelRegistry(
      config({
        openaiCompatible: { baseURL: "http://127.0.0.1:11434/v1", name: "ollama" },
        map: { "aimodel-1.5-pro": "llama3.1:8b" },
      }),
    );
    expect(registry.provider).toBe("openai-compatible");
    for (const alias of MODEL_ALIASES) {
      expect(registry.resolve(alias)).toMatchObject({
        provider: "openai-compatible",
        modelId: "llama3.1:8b",
      });
    }
    expect(registry.resolve("aimodel-1.5-flash").model.provider).toBe("ollama.chat");
  });

  it("OpenAI-compatible: unmapped aliases fall back to the default alias's id", () => {
    const registry = createModelRegistry(
      config({
        provider: "openai-compatible",
        openaiCompatible: { baseURL: "http://127.0.0.1:8000/v1" },
        map: { "aimodel-2.0-flash-exp": "fast", "aimodel-1.5-pro": "big" },
      }),
    );
    expect(registry.describe()).toEqual({
      "aimodel-2.0-flash-exp": { provider: "openai-compatible", modelId: "fast" },
      "aimodel-1.5-pro": { provider: "openai-compatible", modelId: "big" },
      "aimodel-1.5-flash": { provider: "openai-compatible", modelId: "fast" },
    });
  });

  it("explicit offline ignores keys and the map", () => {
    const registry = createModelRegistry(
      config({ provider: "offline", google: { apiKey: "k" }, map: { "aimodel-1.5-pro": "x" } }),
    );
    expect(registry.provider).toBe("offline");
    expect(registry.resolve("aimodel-1.5-pro").modelId).toBe("offline-1");
  });

  it("creates models once: resolve returns the same instance", () => {
    const registry = createModelRegistry(config({ google: { apiKey: "k" } }));
    expect(registry.resolve("aimodel-1.5-flash").model).toBe(registry.resolve("aimodel-1.5-flash").model);
  });

  describe("clear errors on bad configuration", () => {
    const bad: Array<[string, Partial<ModelConfig>, RegExp]> = [
      [
        "google without a key",
        { provider: "google" },
        /"google" needs an API key: set GOOGLE_GENERATIVE_AI_API_KEY/,
      ],
      ["google with a blank key", { provider: "google", google: { apiKey: "  " } }, /needs an API key/],
      [
        "openai-compatible without a base URL",
        { provider: "openai-compatible", map: { "aimodel-1.5-pro": "m" } },
        /needs a base URL: set OPENAI_COMPATIBLE_BASE_URL/,
      ],
      [
        "openai-compatible without any model id",
        { provider: "openai-compatible", openaiCompatible: { baseURL: "http://127.0.0.1:1/v1" } },
        /needs model ids: set MODEL_MAP/,
      ],
      [
        "openai-compatible with two ids, none for the default alias",
        {
          provider: "openai-compatible",
          openaiCompatible: { baseURL: "http://127.0.0.1:1/v1" },
          map: { "aimodel-1.5-pro": "a", "aimodel-1.5-flash": "b" },
        },
        /no model id for aimodel-2\.0-flash-exp/,
      ],
      [
        "a base URL that is not http(s)",
        {
          provider: "openai-compatible",
          openaiCompatible: { baseURL: "ftp://example.com" },
          map: { "aimodel-1.5-pro": "m" },
        },
        /OPENAI_COMPATIBLE_BASE_URL .* must be an http\(s\) URL/,
      ],
      [
        "an unknown alias in the map",
        { map: { "gpt-4": "x" } as ModelConfig["map"] },
        /unknown alias "gpt-4"/,
      ],
      ["an empty model id", { map: { "aimodel-1.5-pro": " " } }, /"aimodel-1\.5-pro" needs a model id/],
      [
        "an unknown provider",
        { provider: "azure" as ModelConfig["provider"] },
        /Unknown model provider "azure"/,
      ],
    ];
    it.each(bad)("%s", (_name, overrides, message) => {
      expect(() => createModelRegistry(config(overrides))).toThrow(ModelConfigError);
      expect(() => createModelRegistry(config(overrides))).toThrow(message);
    });

    it("never echoes secrets: neither the API key nor a URL that may carry one", () => {
      const secret = "sk-very-secret-123";
      let message = "";
      try {
        createModelRegistry(
          config({
            provider: "openai-compatible",
            openaiCompatible: { apiKey: secret, baseURL: `not a url ${secret}` },
            map: { "aimodel-1.5-pro": "m" },
          }),
        );
      } catch (error) {
        message = String(error);
      }
      expect(message).toContain("is not a valid URL");
      expect(message).not.toContain(secret);
    });
  });
});
