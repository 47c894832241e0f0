import type { SchemeClient } from "./types.js";

/**
 * `scheme` with its `createPaymentPayload` replaced by `create`, which may call the original
 * (given as `inner`): how the chain families put a rule in front of the SDK's signing.
 */
export function wrapScheme(
  scheme: SchemeClient,
  create: (
    inner: SchemeClient["createPaymentPayload"],
    ...args: Parameters<SchemeClient["createPaymentPayload"]>
  ) => ReturnType<SchemeClient["createPaymentPayload"]>,
): SchemeClient {
  const inner = scheme.createPaymentPayload.bind(scheme);
  return {
    scheme: scheme.scheme,
    ...(scheme.findDefaultAsset ? { findDefaultAsset: scheme.findDefaultAsset } : {}),
    createPaymentPayload: (...args) => create(inner, ...args),
  };
}
