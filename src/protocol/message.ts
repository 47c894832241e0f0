/**
 * One message of the conversation, as the service takes it. In a file of its own, importing
 * nothing, so the client SDK (packages/client) re-exports this very type and its declarations pull
 * nothing of the server's validators (request.ts).
 */
export interface ChatMessage {
  role: "user" | "assistant" | "system";
  content: string;
}
