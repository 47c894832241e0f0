import type { ModelMessage } from "ai";
import type { ChatRequest } from "../protocol/index.js";
import { APPROVAL_CALL_PREFIX } from "../tools/contract.js";
import type { ToolExchange } from "./context.js";
import { frameClientSystemMessage } from "./system-prompt.js";

/** Turn the request's messages into model messages, framing client system messages below ours. */
export function toModelMessages(request: ChatRequest): ModelMessage[] {
  return request.messages.map((m): ModelMessage => {
    if (m.role === "system") return { role: "system", content: frameClientSystemMessage(m.content) };
    return { role: m.role, content: m.content };
  });
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
