/**
 * The operator's controls (docs/deploy.md#operating-it): API keys per caller, kept in the store as
 * hashes, with scopes, wallets, caps and expiry; and the kill switch that pauses payments for
 * everyone or for one key. `ControlPlane` makes the changes (the operator API and the CLI);
 * `OperatorCache` is each instance's copy, refreshed every ~500 ms, that auth and the payments'
 * pause check read from memory. src/store implements `OperatorStore`.
 */
export {
  type KeyLookup,
  OPERATOR_REFRESH_MS,
  OperatorCache,
  type OperatorCacheOptions,
  type PauseCheck,
  PROPAGATION_MS,
} from "./cache.js";
export {
  grantOf,
  hashToken,
  KEY_NAME,
  KEY_SCOPES,
  type KeyRecord,
  type KeyScope,
  type KeyStatus,
  keyStatus,
  newToken,
  parseDuration,
  TOKEN_PREFIX,
  walletAllowed,
} from "./keys.js";
export {
  ControlPlane,
  type ControlPlaneDeps,
  type CreateKeyInput,
  type KeyLimitsView,
  type KeyView,
  nameTaken,
  type OperatorEvent,
  type OperatorPayment,
  type PauseTarget,
  type PauseView,
  pauseTargetOf,
  pauseView,
} from "./plane.js";
export type { OperatorPaymentRow, OperatorStore, PauseRecord } from "./port.js";
export { OPERATOR_TOKEN_FILE, operatorTokenFor, operatorTokenPath, readOperatorToken } from "./token-file.js";
