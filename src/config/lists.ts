import { MODEL_ALIASES, type ModelAlias } from "../protocol/index.js";
import { ConfigError } from "./errors.js";

/* The comma-separated values of the configuration: lists, key=value pairs, tokens, model maps. */

/** `a,b,c` -> [a, b, c] (empty entries dropped). */
export function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `key=value,key2=value2` -> pairs; the key may itself contain ':' (CAIP-2 ids). */
export function pairs(raw: string | undefined, name: string): [string, string][] {
  return list(raw).map((entry) => {
    const at = entry.indexOf("=");
    if (at <= 0 || at === entry.length - 1)
      throw new ConfigError(`${name}: expected key=value pairs separated by commas`);
    return [entry.slice(0, at).trim(), entry.slice(at + 1).trim()];
  });
}

/** Parse `alias=model-id,alias2=model-id2`. */
export function parseModelMap(raw: string | undefined): Partial<Record<ModelAlias, string>> {
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

/**
 * Parse `name=token,name2=token2` into token -> identity. A token is everything after the first
 * `=` (base64 tokens end in `=`). A name may not start with `jwt:`: that prefix names the identity
 * provider's callers (src/http/auth.ts), whose payments and approvals an identity must not share.
 */
export function parseTokens(raw: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  if (!raw) return tokens;
  for (const entry of raw.split(",")) {
    const at = entry.indexOf("=");
    const name = at < 0 ? "" : entry.slice(0, at).trim();
    const token = at < 0 ? "" : entry.slice(at + 1).trim();
    if (!name || !token || token.length < 16) {
      throw new ConfigError(
        "AUTH_TOKENS: expected name=token pairs separated by commas, tokens of 16+ characters",
      );
    }
    if (name.toLowerCase().startsWith("jwt:"))
      throw new ConfigError("AUTH_TOKENS: a name may not start with jwt: (the identity provider's callers)");
    tokens.set(token, name);
  }
  return tokens;
}
