import { ConfigError } from "./errors.js";

/** Parse `name=token,name2=token2` into token -> identity. */
export function parseTokens(raw: string | undefined): Map<string, string> {
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
