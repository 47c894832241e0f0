export type { ToolExchange, ToolProvider, TurnContext, TurnPrelude } from "./context.js";
export { approvalPrelude, createPaymentTools } from "./payment-tools.js";
export { SYSTEM_PROMPT } from "./system-prompt.js";
export { type AgentDeps, type ModelResolver, runTurn, type TurnInput } from "./turn.js";
