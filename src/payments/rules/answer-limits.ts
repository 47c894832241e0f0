import type { SpendingLimitsInput } from "../../protocol/request.js";
import { type LimitsConfig, normalizeOrigin } from "./limits.js";

/**
 * The limits an approval answer is checked under: those its payment was asked under (kept with
 * it), narrowed by the answering request's own. An answer can lower a limit, never raise one: a
 * request's `perRequest` stays the most it may spend in all, whatever later answers send. A limit
 * either left out is the server's default, as when it was asked.
 */
export function answerLimits(
  server: Pick<LimitsConfig, "defaults">,
  kept: SpendingLimitsInput | undefined,
  answer: SpendingLimitsInput | undefined,
): SpendingLimitsInput | undefined {
  if (!answer) return kept;
  const asked = kept ?? {}; // asked before limits were kept with payments: the server's defaults
  const least = (a: bigint, b: bigint) => (a < b ? a : b);
  const amount = (key: "perTransaction" | "perRequest" | "daily") =>
    least(asked[key] ?? server.defaults[key], answer[key] ?? server.defaults[key]);
  const both = <T>(a: T[] | undefined, b: T[] | undefined, same: (x: T, y: T) => boolean) =>
    a && b ? a.filter((x) => b.some((y) => same(x, y))) : (a ?? b);
  const approvalAbove =
    asked.approvalAbove !== undefined && answer.approvalAbove !== undefined
      ? least(asked.approvalAbove, answer.approvalAbove)
      : (asked.approvalAbove ?? answer.approvalAbove);
  const networks = both(asked.allowedNetworks, answer.allowedNetworks, (x, y) => x === y);
  const services = both(
    asked.allowedServices,
    answer.allowedServices,
    (x, y) => normalizeOrigin(x) === normalizeOrigin(y),
  );
  return {
    perTransaction: amount("perTransaction"),
    perRequest: amount("perRequest"),
    daily: amount("daily"),
    ...(approvalAbove !== undefined ? { approvalAbove } : {}),
    ...(networks ? { allowedNetworks: networks } : {}),
    ...(services ? { allowedServices: services } : {}),
  };
}
