import type {
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";

/** What one tool call of the current turn produced, as the AI SDK fed it back in the prompt. */
export type ToolOutcome =
  | { kind: "ok"; value: JSONValue }
  | { kind: "error"; message: string }
  | { kind: "denied"; message: string };

/** A tool call made after the last user message, with its result once the loop has one. */
export interface TurnToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  outcome?: ToolOutcome;
}

/**
 * The parts of a V3 call the offline model decides from: the last user message, the tool calls and
 * results since then (the multi-step loop appends them), and the function tools offered this call.
 */
export interface TurnView {
  /** Text of the last user message ("" when there is none). */
  userText: string;
  /** How many user messages the prompt holds: part of every tool-call id, so ids stay unique. */
  userTurn: number;
  /** Tool calls since the last user message, in call order. */
  calls: TurnToolCall[];
  /** Names of the function tools the model may call now (empty when toolChoice is "none"). */
  offered: ReadonlySet<string>;
}

/** Read a call's options into a TurnView. Pure: the same options give the same view. */
export function readTurn(options: LanguageModelV4CallOptions): TurnView {
  const { prompt } = options;
  const lastUser = findLastIndex(prompt, (m) => m.role === "user");
  const userMessage = lastUser >= 0 ? prompt[lastUser] : undefined;
  const userText =
    userMessage?.role === "user"
      ? userMessage.content
          .map((part) => (part.type === "text" ? part.text : ""))
          .join("\n")
          .trim()
      : "";

  const calls: TurnToolCall[] = [];
  const byId = new Map<string, TurnToolCall>();
  for (const message of prompt.slice(lastUser + 1)) {
    if (message.role !== "assistant" && message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-call") {
        const call: TurnToolCall = {
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: part.input,
        };
        calls.push(call);
        byId.set(part.toolCallId, call);
      } else if (part.type === "tool-result") {
        const call = byId.get(part.toolCallId);
        if (call) call.outcome = toOutcome(part.output);
      }
    }
  }

  const offered = new Set<string>();
  if (options.toolChoice?.type !== "none") {
    for (const tool of options.tools ?? []) {
      if (tool.type === "function") offered.add(tool.name);
    }
  }

  return { userText, userTurn: prompt.filter((m) => m.role === "user").length, calls, offered };
}

function toOutcome(output: LanguageModelV4ToolResultOutput): ToolOutcome {
  switch (output.type) {
    case "json":
      return { kind: "ok", value: output.value };
    case "text":
      return { kind: "ok", value: output.value };
    case "error-text":
      // ai 7 writes a thrown error as `String(error)` ("Error: ..."): the words are after the name.
      return { kind: "error", message: output.value.replace(/^Error: /, "") };
    case "error-json":
      return { kind: "error", message: errorMessageOf(output.value) };
    case "execution-denied":
      return { kind: "denied", message: output.reason ?? "the call was not approved" };
    case "content":
      return {
        kind: "ok",
        value: output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n"),
      };
  }
}

function errorMessageOf(value: JSONValue): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    // A readonly JSON array is not narrowed out by Array.isArray: read the field as optional.
    const message = (value as { readonly message?: JSONValue }).message;
    if (typeof message === "string") return message;
  }
  return JSON.stringify(value);
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item !== undefined && predicate(item)) return i;
  }
  return -1;
}

/** Every word of the prompt, tool traffic included: the input side of the usage estimate. */
export function countPromptWords(prompt: LanguageModelV4Prompt): number {
  let words = 0;
  for (const message of prompt) {
    if (message.role === "system") {
      words += countWords(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") words += countWords(part.text);
      else if (part.type === "tool-call") words += countWords(JSON.stringify(part.input ?? null));
      else if (part.type === "tool-result")
        words += countWords(JSON.stringify("value" in part.output ? part.output.value : null));
    }
  }
  return words;
}

/** Words as the usage estimate counts them (tokens ~= words). */
export function countWords(text: string): number {
  return text.split(/[\s,:{}[\]"]+/).filter(Boolean).length;
}
