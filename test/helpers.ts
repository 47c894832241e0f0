import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { onTestFinished } from "vitest";
import { type Config, loadConfig } from "../src/config/index.js";
import { silentLogger } from "../src/log/index.js";
import type { ModelRegistry } from "../src/models/index.js";
import {
  decodeStream,
  encodeLine,
  MODEL_ALIASES,
  type ModelAlias,
  type StreamEvent,
} from "../src/protocol/index.js";
import { createService, type ServiceOverrides } from "../src/service.js";

/** Config as on a fresh clone, with environment overrides (strings, as env vars are). */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ RATE_LIMIT_POINTS: "1000", RATE_LIMIT_ANONYMOUS_POINTS: "1000", ...env });
}

/** A registry that resolves every alias to one given model (a fake implementing the real interface). */
export function singleModelRegistry(model: LanguageModelV4, provider = "mock"): ModelRegistry {
  const describe = Object.fromEntries(
    MODEL_ALIASES.map((a) => [a, { provider, modelId: model.modelId }]),
  ) as Record<ModelAlias, { provider: string; modelId: string }>;
  return {
    provider: provider as ModelRegistry["provider"],
    resolve: (alias) => ({
      model,
      provider: provider as ModelRegistry["provider"],
      modelId: model.modelId,
      alias,
    }),
    describe: () => describe,
  };
}

/** A mock model that streams the given text in chunks, optionally slowly. */
export function textModel(chunks: string[], options: { delayMs?: number } = {}): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    modelId: "mock-text",
    doStream: async ({ abortSignal }) => {
      const parts: LanguageModelV4StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t1" },
        ...chunks.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t1", delta })),
        { type: "text-end", id: "t1" },
        {
          type: "finish",
          finishReason: { unified: "stop", raw: "stop" },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: chunks.length, text: chunks.length, reasoning: 0 },
          },
        },
      ];
      const delay = options.delayMs ?? 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          for (const part of parts) {
            if (delay > 0) await sleep(delay, abortSignal);
            if (abortSignal?.aborted) {
              controller.error(abortSignal.reason);
              return;
            }
            controller.enqueue(part);
          }
          controller.close();
        },
      });
      return { stream };
    },
  });
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function buildService(env: Record<string, string> = {}, overrides: ServiceOverrides = {}) {
  const models = overrides.models ?? singleModelRegistry(textModel(["Hello", " there", "!"]));
  return createService(testConfig(env), silentLogger, { ...overrides, models });
}

export const USER_HI = { messages: [{ role: "user", content: "hi" }] };

export function chatRequest(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

export async function readEvents(response: Response): Promise<StreamEvent[]> {
  if (!response.body) throw new Error("no body");
  const events: StreamEvent[] = [];
  for await (const event of decodeStream(response.body)) events.push(event);
  return events;
}

/**
 * A new directory under the system's temp folder for one test, removed when the test ends (the
 * key files the terminal tests write are not left behind).
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Whether a process with this id runs (one of another user's counts: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The body of an answer that stops mid-payment (the service went away): a text line and payment
 * `pay_cut` at `submitted`, then nothing, no `d:` line.
 */
export function answerCutMidPayment(): string {
  const submitted: StreamEvent = {
    type: "payment",
    payment: {
      paymentId: "pay_cut",
      status: "submitted",
      service: { url: "https://weather.example/" },
      amount: { atomic: "10000", usd: "0.01" },
      network: "eip155:31337",
    },
  };
  return `${encodeLine({ type: "text", text: "Paying now." })}${encodeLine(submitted)}`;
}
