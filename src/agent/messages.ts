import type { ModelMessage } from "ai";
import type { ChatRequest } from "../protocol/index.js";
import { APPROVAL_CALL_PREFIX } from "../tools/contract.js";
import type { ToolExchange } from "./context.js";
import { frameClientSystemMessage } from "./system-prompt.js";

/**
 * Turn the request's messages into model messages, framing client system messages below ours. They
 * go first, in their order: several providers (Google's, Anthropic's) refuse a system message after
 * the conversation has begun, which would fail the turn as the provider's fault.
 */
export function toModelMessages(request: ChatRequest): ModelMessage[] {
  const system = request.messages.flatMap((m): ModelMessage[] =>
    m.role === "system" ? [{ role: "system", content: frameClientSystemMessage(m.content) }] : [],
  );
  const rest = request.messages.flatMap((m): ModelMessage[] =>
    m.role === "system" ? [] : [{ role: m.role, content: m.content }],
  );
  return [...system, ...rest];
}

/** The exchange as the model's own earlier step: its tool call, then the tool's result. */
export function exchangeMessages(exchange: ToolExchange, id: string): ModelMessage[] {
  const toolCallId = `${APPROVAL_CALL_PREFIX}${id}`;
  return [
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId, toolName: exchange.toolName, input: exchange.input }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId,
          toolName: exchange.toolName,
          output: { type: "json", value: exchange.output as never },
        },
      ],
    },
  ];
}
