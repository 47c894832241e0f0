/**
 * A program that uses only the fetch client of the packed `@x402-chat-agent/client`, in a project
 * with no `ai` installed (test/client/pack.test.ts): it type-checks strictly, declarations included.
 */
import {
  ChatClient,
  ChatHttpError,
  type ChatRequestBody,
  describePaymentApproval,
  isCommitted,
  resumeBody,
  type StreamEvent,
} from "@x402-chat-agent/client";

export async function ask(baseUrl: string, walletAddress: string): Promise<string> {
  const body: ChatRequestBody = { messages: [{ role: "user", content: "Weather in Paris?" }], walletAddress };
  try {
    const turn = await new ChatClient({ baseUrl }).chat(body);
    let text = "";
    for await (const event of turn as AsyncIterable<StreamEvent>) {
      if (event.type === "text") text += event.text;
      if (event.type === "payment" && isCommitted(event.payment.status)) text += ` [${event.payment.status}]`;
      if (event.type === "payment" && event.payment.status === "awaiting_approval" && event.payment.approval)
        text += describePaymentApproval({ ...event.payment, approval: event.payment.approval }).summary;
    }
    return JSON.stringify(resumeBody(body, text, { paymentId: "pay_1", reject: true }));
  } catch (error) {
    if (error instanceof ChatHttpError) return error.code;
    throw error;
  }
}
