/**
 * Outbound HTTP for the service: the only way server-side code should reach a URL it did not
 * choose itself (discovery endpoints, paid services). See safe-fetch.ts for the rules.
 */
export { type AddressClass, classifyAddress } from "./address.js";
export {
  createSafeFetch,
  type SafeFetch,
  type SafeFetchInit,
  type SafeFetchPolicy,
  type SafeResponse,
} from "./safe-fetch.js";
export { type BlockedReason, isSafeFetchBlockedError, SafeFetchBlockedError } from "./targets.js";
