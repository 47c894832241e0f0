import type { ModelAlias } from "../protocol/models.js";

/**
 * Gemini ids the public aliases go to when only an API key is configured. The aliases' original names
 * (`gemini-1.5-*`, `gemini-2.0-flash-exp`) are retired upstream, so each alias maps to a served model
 * of the same character: the "latest, fastest" alias follows Google's moving flash alias, the others
 * take stable, generally available ids. Override any of them with the model map (MODEL_MAP).
 */
export const GOOGLE_DEFAULT_MODELS: Readonly<Record<ModelAlias, string>> = {
  "aimodel-2.0-flash-exp": "gemini-flash-latest",
  "aimodel-1.5-pro": "gemini-2.5-pro",
  "aimodel-1.5-flash": "gemini-2.5-flash",
};
