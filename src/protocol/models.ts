/**
 * The public model names (docs/protocol.md, "Request": `model`), defined once for the service, the
 * client SDK, the terminal chat and the web page. What each resolves to is configuration (src/models).
 */
export const MODEL_ALIASES = ["aimodel-2.0-flash-exp", "aimodel-1.5-pro", "aimodel-1.5-flash"] as const;
export type ModelAlias = (typeof MODEL_ALIASES)[number];

/** The model of a request that names none. */
export const DEFAULT_MODEL: ModelAlias = "aimodel-2.0-flash-exp";
