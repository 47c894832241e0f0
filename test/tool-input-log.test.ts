/**
 * A model's malformed tool call (its input fails the tool's schema) is the model's mistake: it is
 * answered to the model, and the log says so in one short warning, never the input at error level.
 */
import { type ToolSet, tool } from "ai";
import { expect, it } from "vitest";
import type { Logger } from "../src/log/index.js";
import { createService } from "../src/service.js";
import { payInputSchema, TOOL_NAMES } from "../src/tools/contract.js";
import { chatRequest, readEvents, singleModelRegistry, testConfig } from "./helpers.js";
import { scriptedModel } from "./scripted.js";

// Found by a black-box run: a body nested 2,500 deep was logged whole, at error level.
it("logs a model's malformed tool call as a short warning, without its input", async () => {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (msg, fields) => void lines.push({ level: "warn", msg, ...(fields ? { fields } : {}) }),
    error: (msg, fields) => void lines.push({ level: "error", msg, ...(fields ? { fields } : {}) }),
  };
  let body: Record<string, unknown> = { marker: "deep-input-marker" };
  for (let i = 0; i < 40; i++) body = { a: body };
  let ran = false;
  const tools = (): ToolSet => ({
    [TOOL_NAMES.pay]: tool({
      inputSchema: payInputSchema,
      execute: async () => {
        ran = true;
        return { status: "paid" };
      },
    }),
  });
  const model = scriptedModel([[{ toolName: TOOL_NAMES.pay, input: { url: "https://a.example/x", body } }]]);
  const { app } = createService(testConfig(), logger, { models: singleModelRegistry(model), tools });
  const events = await readEvents(
    await app.request("/api/chat", chatRequest({ messages: [{ role: "user", content: "pay" }] })),
  );
  expect(events.at(-1)?.type).toBe("finish");
  expect(ran).toBe(false);
  expect(lines.filter((l) => l.level === "error")).toEqual([]);
  expect(lines).toEqual([
    {
      level: "warn",
      msg: "the model's tool call was refused",
      fields: { tool: TOOL_NAMES.pay, reason: "AI_InvalidToolInputError" },
    },
  ]);
  expect(JSON.stringify(lines)).not.toContain("deep-input-marker");
});
