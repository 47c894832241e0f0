import { APICallError, RetryError } from "ai";
import { describe, expect, it } from "vitest";
import { describeModelError } from "./model-error.js";

const failed = (statusCode: number) =>
  new APICallError({
    message: "key=sk-secret",
    url: "http://x",
    requestBodyValues: {},
    statusCode,
    isRetryable: true,
  });

describe("what the client hears of a model's failure", () => {
  // Found by a review: the AI SDK wraps a retried failure (429, 503), and its status was lost.
  it("names the provider's status, also after its retries failed, never its words", () => {
    const retried = new RetryError({
      message: "x",
      reason: "maxRetriesExceeded",
      errors: [failed(500), failed(503)],
    });
    for (const [error, status] of [
      [failed(429), 429],
      [retried, 503],
    ] as const) {
      const said = describeModelError(error);
      expect(said.code).toBe("model_error");
      expect(said.details).toEqual({ providerStatus: status });
      expect(said.message).not.toContain("sk-secret");
    }
  });
});
