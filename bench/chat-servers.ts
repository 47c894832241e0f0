import { randomUUID } from "node:crypto";
import { streamText } from "ai";
import { Hono } from "hono";
import { SYSTEM_PROMPT } from "../src/agent/index.js";
import { loadConfig } from "../src/config/index.js";
import { silentLogger } from "../src/log/index.js";
import { createOfflineModel } from "../src/models/index.js";
import { PROTOCOL_HEADER, PROTOCOL_VERSION, REQUEST_DEFAULTS } from "../src/protocol/index.js";
import { createService, listen } from "../src/service.js";
import { CHAT_BODY } from "./fixtures.js";

/**
 * Runs in its own process so the load generator does not share an event loop with the servers:
 * the chat service (offline model, no payments), a bare Hono route that streams the very same
 * bytes line by line, and a plain AI SDK `streamText` route on the same offline model that answers
 * the same bytes (checked at start). Prints the URLs as one JSON line.
 */
const config = loadConfig({
  PORT: "0",
  RATE_LIMIT_POINTS: "1000000",
  RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
  PAYMENTS: "off",
});
const offline = createOfflineModel();
const service = createService(config, silentLogger);
const chat = await listen(service.app, config);

const sample = await service.app.request("/api/chat", {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: CHAT_BODY,
});
const bytes = await sample.text();
const MODEL = { model: REQUEST_DEFAULTS.model, provider: "offline", modelId: offline.modelId };
const lines = bytes.split(/(?<=\n)/);

const bare = new Hono();
bare.post("/api/chat", async (c) => {
  await c.req.json();
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const line of lines) controller.enqueue(encoder.encode(line));
      controller.close();
    },
  });
  return new Response(stream, {
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache" },
  });
});
bare.post("/plain", async (c) => {
  // What one would write without this service: the AI SDK's streamText with the same offline
  // model and system prompt, text deltas written as 0: lines and the same d: line (finish reason,
  // usage, model), with the same headers; no validation, limits, tools, deadline or heartbeat.
  const { messages } = (await c.req.json()) as { messages: { role: "user"; content: string }[] };
  const result = streamText({ model: offline, instructions: SYSTEM_PROMPT, messages });
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
      let finishReason: string = "stop";
      for await (const part of result.stream) {
        if (part.type === "text-delta")
          controller.enqueue(encoder.encode(`0:${JSON.stringify(part.text)}\n`));
        else if (part.type === "finish") {
          finishReason = part.finishReason;
          usage.inputTokens = part.totalUsage.inputTokens ?? 0;
          usage.outputTokens = part.totalUsage.outputTokens ?? 0;
          usage.totalTokens = part.totalUsage.totalTokens ?? 0;
        }
      }
      const finish = { finishReason, transactions: [], payments: [], usage, ...MODEL };
      controller.enqueue(encoder.encode(`d:${JSON.stringify(finish)}\n`));
      controller.close();
    },
  });
  return new Response(stream, {
    headers: {
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      [PROTOCOL_HEADER]: PROTOCOL_VERSION,
      "X-Request-Id": randomUUID(),
      "Content-Type": "text/plain; charset=utf-8",
    },
  });
});
const bareServer = await listen(bare, { host: "127.0.0.1", port: 0 });

// The comparison is only fair if both do the same work: the plain route must answer the same bytes.
const plainBytes = await (
  await bare.request("/plain", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: CHAT_BODY,
  })
).text();
if (plainBytes !== bytes) {
  process.stderr.write(`the plain route answers other bytes than /api/chat:\n${plainBytes}\n---\n${bytes}\n`);
  process.exit(1);
}

process.stdout.write(
  `${JSON.stringify({ chat: chat.url, bare: bareServer.url, plain: `${bareServer.url}/plain`, bytes: bytes.length, lines: lines.length })}\n`,
);
process.on("SIGTERM", () => process.exit(0));
