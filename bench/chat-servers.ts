import { streamText } from "ai";
import { Hono } from "hono";
import { SYSTEM_PROMPT } from "../src/agent/index.js";
import { loadConfig } from "../src/config/index.js";
import { silentLogger } from "../src/log/index.js";
import { createOfflineModel } from "../src/models/index.js";
import { createService, listen } from "../src/service.js";
import { CHAT_BODY } from "./fixtures.js";

/**
 * Runs in its own process so the load generator does not share an event loop with the servers:
 * the chat service (offline model, no payments) and a bare Hono route that streams the very same
 * bytes line by line. Prints both URLs as one JSON line.
 */
const config = loadConfig({ PORT: "0", RATE_LIMIT_POINTS: "1000000", PAYMENTS: "off" });
const offline = createOfflineModel();
const service = createService(config, silentLogger);
const chat = await listen(service.app, config);

const sample = await service.app.request("/api/chat", {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: CHAT_BODY,
});
const bytes = await sample.text();
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
  // model and system prompt, text deltas written as 0: lines, no validation, limits or tools.
  const { messages } = (await c.req.json()) as { messages: { role: "user"; content: string }[] };
  const result = streamText({ model: offline, system: SYSTEM_PROMPT, messages });
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for await (const text of result.textStream)
        controller.enqueue(encoder.encode(`0:${JSON.stringify(text)}\n`));
      controller.enqueue(encoder.encode('d:{"finishReason":"stop"}\n'));
      controller.close();
    },
  });
  return new Response(stream, {
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache" },
  });
});
const bareServer = await listen(bare, { host: "127.0.0.1", port: 0 });

process.stdout.write(
  `${JSON.stringify({ chat: chat.url, bare: bareServer.url, plain: `${bareServer.url}/plain`, bytes: bytes.length, lines: lines.length })}\n`,
);
process.on("SIGTERM", () => process.exit(0));
