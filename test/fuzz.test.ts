import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildService, chatRequest } from "./helpers.js";

/** Malformed input never yields a 5xx (docs/protocol.md#errors-before-the-stream). */
const { app } = buildService({ RATE_LIMIT_POINTS: "1000000", RATE_LIMIT_ANONYMOUS_POINTS: "1000000" });

async function statusOf(init: RequestInit): Promise<number> {
  const res = await app.request("/api/chat", init);
  await res.arrayBuffer();
  return res.status;
}

const valid = {
  messages: [{ role: "user", content: "what's the weather in Paris" }],
  walletAddress: "0x52908400098527886E0F7030069857D2E4169EE7",
  spendingLimits: { perTransaction: "0.5", daily: "5", allowedNetworks: ["eip155:31337"] },
  model: "aimodel-1.5-flash",
  temperature: 0.4,
  maxTokens: 1000,
};

const fieldValue = fc.oneof(
  fc.jsonValue(),
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.double(),
  fc.constantFrom(-1, 0, 1e308, Number.MAX_SAFE_INTEGER, "", "0x", "1e3", "NaN", "Infinity", null),
);

describe("fuzzing the chat endpoint", () => {
  it("random JSON bodies never get a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (body) => {
        expect(await statusOf(chatRequest(JSON.stringify(body)))).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });

  it("valid bodies with one field mutated never get a 5xx", async () => {
    const paths = [
      ["messages"],
      ["messages", 0],
      ["messages", 0, "role"],
      ["messages", 0, "content"],
      ["walletAddress"],
      ["spendingLimits"],
      ["spendingLimits", "perTransaction"],
      ["spendingLimits", "daily"],
      ["spendingLimits", "allowedNetworks"],
      ["model"],
      ["temperature"],
      ["maxTokens"],
      ["extra"],
    ] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fieldValue, async (path, value) => {
        const body = structuredClone(valid) as Record<string, unknown>;
        let target: Record<string | number, unknown> = body;
        for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
        target[path.at(-1) as string | number] = value;
        expect(await statusOf(chatRequest(JSON.stringify(body)))).toBeLessThan(500);
      }),
      { numRuns: 200 },
    );
  });

  it("arbitrary bytes and content types never get a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 512 }),
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "text/plain",
          "",
          "application/x+json",
        ),
        async (bytes, type) => {
          const status = await statusOf({
            method: "POST",
            headers: type ? { "Content-Type": type } : {},
            body: bytes,
          });
          expect(status).toBeLessThan(500);
        },
      ),
      { numRuns: 150 },
    );
  });
});
