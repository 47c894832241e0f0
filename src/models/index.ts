/**
 * The models capability: the three public model names (docs/protocol.md, "Request") are aliases, resolved at start to one
 * provider (Gemini, an OpenAI-compatible server, or the built-in offline model) by configuration.
 */
export { GOOGLE_DEFAULT_MODELS } from "./google.js";
export { classify, createOfflineModel, type Intent, type OfflineModelOptions } from "./offline/index.js";
export {
  createModelRegistry,
  type ModelConfig,
  ModelConfigError,
  type ModelRegistry,
  type ProviderName,
  type ResolvedModel,
} from "./registry.js";
