import { APICallError, RetryError } from "ai";
import { AppError, isAppError } from "../errors/index.js";

/**
 * What the client hears when the model fails: an AppError keeps its code; anything else is
 * `model_error`, with the provider's HTTP status as its only detail, so the client reads a stable
 * code rather than the provider's own text.
 */
export function describeModelError(failure: unknown): AppError {
  // A retried failure (429, 503) comes wrapped: the provider's answer is its last attempt's.
  const error = RetryError.isInstance(failure) ? failure.lastError : failure;
  if (isAppError(error)) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode ? ` with HTTP ${error.statusCode}` : "";
    return new AppError(
      "model_error",
      `The model provider failed${status}. Try again or choose another model.`,
      {
        details: error.statusCode ? { providerStatus: error.statusCode } : {},
      },
    );
  }
  return new AppError("model_error", "The model provider failed. Try again or choose another model.");
}
