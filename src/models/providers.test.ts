import { isStepCount, streamText, type ToolSet } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toModelMessages } from "../agent/messages.js";
import type { ChatRequest } from "../protocol/index.js";
import { TOOL_NAMES } from "../tools/contract.js";
import { createModelRegistry, type ResolvedModel } from "./index.js";
import { fakeTools } from "./offline/testing/fake-tools.js";
import {
  type LoopbackServer,
  type RecordedRequest,
  sse,
  startLoopbackServer,
} from "./testing/loopback-server.js";

/**
 * The real `@ai-sdk/google` and `@ai-sdk/openai-compatible` code paths, resolved through the
 * registry, against a loopback server speaking their wire formats.
 */

let server: LoopbackServer;
beforeAll(async () => {
  server = await startLoopbackServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

interface Outcome {
  text: string;
  toolCalls: Array<{ toolName: string; input: unknown }>;
  toolResults: unknown[];
  errors: unknown[];
  finishReason: string | undefined;
}

async function drive(resolved: ResolvedModel, prompt: string, tools?: ToolSet): Promise<Outcome> {
  const result = streamText({
    model: resolved.model,
    messages: [{ role: "user", content: prompt }],
    ...(tools ? { tools } : {}),
    stopWhen: isStepCount(3),
    maxRetries: 0,
    onError: () => {},
  });
  const out: Outcome = { text: "", toolCalls: [], toolResults: [], errors: [], finishReason: undefined };
  for await (const part of result.stream) {
    if (part.type === "text-delta") out.text += part.text;
    else if (part.type === "tool-call") out.toolCalls.push({ toolName: part.toolName, input: part.input });
    else if (part.type === "tool-result") out.toolResults.push(part.output);
    else if (part.type === "error") out.errors.push(part.error);
    else if (part.type === "finish") out.finishReason = part.finishReason;
  }
  return out;
}

function bodyOf(request: RecordedRequest | undefined): Record<string, unknown> {
  const body = request?.body;
  if (typeof body !== "object" || body === null) throw new Error("expected a JSON request body");
  return body as Record<string, unknown>;
}

describe("Google (Gemini) through @ai-sdk/google", () => {
  const googleEvent = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 4, totalTokenCount: 16 },
  });

  const registry = () =>
    createModelRegistry({
      provider: "auto",
      google: { apiKey: "loopback-google-key", baseURL: `${server.origin}/v1beta` },
      openaiCompatible: {},
      map: { "aimodel-1.5-pro": "gemini-test-pro" },
    });

  it("streams a plain text answer", async () => {
    server.script({
      chunks: sse(googleEvent([{ text: "Hello from " }]), googleEvent([{ text: "Gemini." }], "STOP")),
    });
    const resolved = registry().resolve("aimodel-1.5-pro");
    expect(resolved).toMatchObject({ provider: "google", modelId: "gemini-test-pro" });
    const out = await drive(resolved, "hi");
    expect(out.text).toBe("Hello from Gemini.");
    expect(out.finishReason).toBe("stop");
    const request = server.requests[0];
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1beta/models/gemini-test-pro:streamGenerateContent?alt=sse");
    expect(request?.headers["x-goog-api-key"]).toBe("loopback-google-key");
    expect(bodyOf(request).contents).toEqual([{ role: "user", parts: [{ text: "hi" }] }]);
  });

  // Found by a review: the provider refuses a system message after the conversation began.
  it("takes a request whose client system message came mid-conversation (the agent's messages)", async () => {
    server.script({ chunks: sse(googleEvent([{ text: "Bonjour." }], "STOP")) });
    const messages = toModelMessages({
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: "Answer in French." },
        { role: "user", content: "what can you do?" },
      ],
    } as ChatRequest);
    const result = streamText({
      model: registry().resolve("aimodel-1.5-pro").model,
      instructions: "the agent's own",
      messages,
      allowSystemInMessages: true,
      maxRetries: 0,
    });
    expect(await result.text).toBe("Bonjour.");
    expect(JSON.stringify(bodyOf(server.requests[0]).systemInstruction)).toContain("Answer in French.");
  });

  it("uses the default id for an unmapped alias", async () => {
    server.script({ chunks: sse(googleEvent([{ text: "ok" }], "STOP")) });
    await drive(registry().resolve("aimodel-2.0-flash-exp"), "hi");
    expect(server.requests[0]?.path).toBe("/v1beta/models/gemini-flash-latest:streamGenerateContent?alt=sse");
  });

  it("runs a tool call: functionCall, then the tool result goes back, then text", async () => {
    const { tools, calls } = fakeTools();
    server.script(
      {
        chunks: sse(
          googleEvent(
            [{ functionCall: { name: TOOL_NAMES.budget, args: {} }, thoughtSignature: "c2lnLTE=" }],
            "STOP",
          ),
        ),
      },
      { chunks: sse(googleEvent([{ text: "You have $0.95 left today." }], "STOP")) },
    );
    const out = await drive(registry().resolve("aimodel-1.5-pro"), "what is my budget?", tools);

    expect(out.toolCalls).toEqual([{ toolName: TOOL_NAMES.budget, input: {} }]);
    expect(calls.map((c) => c.toolName)).toEqual([TOOL_NAMES.budget]);
    expect(out.text).toBe("You have $0.95 left today.");
    expect(out.finishReason).toBe("stop");

    expect(server.requests).toHaveLength(2);
    const declared = bodyOf(server.requests[0]).tools as Array<{
      functionDeclarations?: Array<{ name: string }>;
    }>;
    const names = declared.flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
    expect(names.sort()).toEqual(Object.values(TOOL_NAMES).sort());

    const followUp = JSON.stringify(bodyOf(server.requests[1]).contents);
    expect(followUp).toContain('"functionCall"');
    expect(followUp).toContain('"functionResponse"');
    expect(followUp).toContain('"thoughtSignature":"c2lnLTE="');
    expect(followUp).toContain('"remainingTodayUsd":"0.95"');
  });

  it("surfaces an HTTP 500 as an error part", async () => {
    server.script({
      status: 500,
      contentType: "application/json",
      chunks: [JSON.stringify({ error: { code: 500, message: "backend exploded", status: "INTERNAL" } })],
    });
    const out = await drive(registry().resolve("aimodel-1.5-pro"), "hi");
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatchObject({ statusCode: 500 });
    expect(out.finishReason).toBeUndefined();
  });
});

describe("OpenAI-compatible through @ai-sdk/openai-compatible", () => {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, usage?: unknown) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "llama-test",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  });
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

  const registry = () =>
    createModelRegistry({
      provider: "auto",
      google: {},
      openaiCompatible: { baseURL: `${server.origin}/v1`, apiKey: "loopback-oa-key", name: "loopback" },
      map: { "aimodel-2.0-flash-exp": "llama-test" },
    });

  it("streams a plain text answer; one mapped id serves every alias", async () => {
    server.script({
      chunks: sse(
        chunk({ role: "assistant", content: "Hello from " }),
        chunk({ content: "Llama." }),
        chunk({}, "stop", usage),
        "[DONE]",
      ),
    });
    const resolved = registry().resolve("aimodel-1.5-flash");
    expect(resolved).toMatchObject({ provider: "openai-compatible", modelId: "llama-test" });
    const out = await drive(resolved, "hi");
    expect(out.text).toBe("Hello from Llama.");
    expect(out.finishReason).toBe("stop");
    const request = server.requests[0];
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe("Bearer loopback-oa-key");
    expect(bodyOf(request)).toMatchObject({
      model: "llama-test",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it("runs a tool call: streamed tool_calls, then the tool message goes back, then text", async () => {
    const { tools, calls } = fakeTools();
    server.script(
      {
        chunks: sse(
          chunk({
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: "call_1",
                type: "function",
                function: { name: TOOL_NAMES.discover, arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"query":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"weather"}' } }] }),
          chunk({}, "tool_calls", usage),
          "[DONE]",
        ),
      },
      {
        chunks: sse(
          chunk({ role: "assistant", content: "Weather costs $0.01." }),
          chunk({}, "stop", usage),
          "[DONE]",
        ),
      },
    );
    const out = await drive(registry().resolve("aimodel-2.0-flash-exp"), "find weather services", tools);

    expect(out.toolCalls).toEqual([{ toolName: TOOL_NAMES.discover, input: { query: "weather" } }]);
    expect(calls).toEqual([{ toolName: TOOL_NAMES.discover, input: { query: "weather" } }]);
    expect(out.text).toBe("Weather costs $0.01.");

    expect(server.requests).toHaveLength(2);
    const declared = bodyOf(server.requests[0]).tools as Array<{ type: string; function: { name: string } }>;
    expect(declared.map((t) => t.function.name).sort()).toEqual(Object.values(TOOL_NAMES).sort());
    const messages = bodyOf(server.requests[1]).messages as Array<Record<string, unknown>>;
    expect(messages[1]).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_1", type: "function", function: { name: TOOL_NAMES.discover } }],
    });
    expect(messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(String(messages[2]?.content)).toContain('"name":"Weather"');
  });

  it("surfaces an HTTP 500 as an error part", async () => {
    server.script({
      status: 500,
      contentType: "application/json",
      chunks: [JSON.stringify({ error: { message: "model crashed", type: "server_error" } })],
    });
    const out = await drive(registry().resolve("aimodel-1.5-pro"), "hi");
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatchObject({ statusCode: 500 });
    expect(out.finishReason).toBeUndefined();
  });
});
