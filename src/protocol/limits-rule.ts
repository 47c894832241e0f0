/**
 * How a request's spending limits combine with the service's and an operator key's
 * (docs/payments.md#spending-limits, `resolveLimits` in src/payments/rules/limits.ts), in the one
 * sentence every surface shows word for word: the web page's Settings, the terminal chat's help,
 * docs/protocol.md and docs/payments.md (test/limits-rule.test.ts holds them to it).
 */
export const LIMITS_RULE =
  "A request's limits apply up to the service's caps and your key's caps; a limit left out gets the service's default, within those caps.";
