import { ConfigError } from "./errors.js";
import { parseTokens } from "./lists.js";

/**
 * The operator's and the metrics' tokens open their routes only (docs/deploy.md#operating-it): one
 * that is also an AUTH_TOKENS token would let that chat caller run the operator API (or the other
 * way round), so it is refused at start, naming the variables and echoing no token.
 */
export function checkTokensApart(
  authTokens: string | undefined,
  own: Record<string, string | undefined>,
): void {
  const chat = parseTokens(authTokens);
  const clash = Object.entries(own).filter(([, token]) => token !== undefined && chat.has(token));
  const [first, second] = Object.values(own);
  const lines = clash.map(([name]) => `  ${name}: must differ from every AUTH_TOKENS token`);
  if (first !== undefined && first === second)
    lines.push(
      "  METRICS_TOKEN: must differ from OPERATOR_TOKEN (a scraper does not need the operator's powers)",
    );
  if (lines.length > 0) throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
}
