/**
 * A program of another project that installed the packed `@x402-chat-agent/client` tarball and the
 * current AI SDK (test/client/pack.test.ts): type-checked under `strict` with `moduleResolution`
 * `bundler` and `node16`, then run against the service. Only the package's public face is used:
 * the root entry and `@x402-chat-agent/client/ai`.
 */

import {
  ChatClient,
  ChatHttpError,
  type ChatRequestBody,
  type ChatTurn,
  type EvmTypedDataSigner,
  type FinishPayload,
  type PaymentState,
  type PaymentUpdate,
  type paymentStateSchema,
  resumeBody,
  type StreamEvent,
  signEvmApproval,
} from "@x402-chat-agent/client";
import {
  approvalBody,
  PaymentChatTransport,
  type PaymentUIMessage,
  paymentChatSchemas,
} from "@x402-chat-agent/client/ai";
import { AbstractChat, type ChatState, type ChatStatus, type UIMessage } from "ai";

// viem signs, as the package's EvmTypedDataSigner takes it; loaded by a name tsc does not follow,
// so this check reads the client's and the AI SDK's declarations, not viem's (minutes, no skipLibCheck).
const viemAccounts: string = "viem/accounts";
const { privateKeyToAccount } = (await import(viemAccounts)) as {
  privateKeyToAccount(key: string): EvmTypedDataSigner;
};

// The declarations are complete: none of these is `any`.
type IsAny<T> = 0 extends 1 & T ? true : false;
const notAny: [
  IsAny<ChatClient>,
  IsAny<ChatTurn>,
  IsAny<StreamEvent>,
  IsAny<PaymentUpdate>,
  IsAny<PaymentChatTransport>,
  IsAny<FinishPayload>,
  IsAny<PaymentState>,
  IsAny<ReturnType<typeof paymentStateSchema.parse>>,
] = [false, false, false, false, false, false, false, false];

class PlainState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: M[] = [];
  pushMessage = (message: M) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/**
 * `useChat`'s driver without React: the AI SDK's own AbstractChat over the package's transport,
 * with the protocol's schemas checking each payment card and the finish metadata as they arrive.
 */
class Chat extends AbstractChat<PaymentUIMessage> {
  constructor(transport: PaymentChatTransport) {
    super({ transport, state: new PlainState<PaymentUIMessage>(), ...paymentChatSchemas });
  }
}

const [baseUrl = "", token = "", payer = "", user = "", key = ""] = JSON.parse(
  (globalThis as { process?: { argv: string[] } }).process?.argv[2] ?? "[]",
) as string[];
const question = "What's the weather in Paris?";
const body = (walletAddress: string): ChatRequestBody => ({
  messages: [{ role: "user", content: question }],
  walletAddress,
});

// 1. The fetch client, paying with the server-held key of the payer wallet.
const client = new ChatClient({ baseUrl, token });
const turn = await client.chat(body(payer));
let text = "";
const statuses: string[] = [];
let finishReason = "";
let transaction: string | undefined;
for await (const event of turn) {
  if (event.type === "text") text += event.text;
  if (event.type === "payment") {
    statuses.push(event.payment.status);
    transaction = event.payment.transaction ?? transaction;
  }
  if (event.type === "finish") finishReason = event.finish.finishReason;
}

// 2. The approval round trip in the user's own wallet, through the fetch client.
const wallet = privateKeyToAccount(key);
const first = await (await new ChatClient({ baseUrl }).chat(body(user))).collect();
const [waiting] = first.awaitingApproval;
if (!waiting) throw new Error(`no approval asked: ${first.finish.finishReason}`);
const answer = await signEvmApproval(waiting, wallet);
const second = await (
  await new ChatClient({ baseUrl }).chat(resumeBody(body(user), first.text, answer))
).collect();

// 3. The same through the useChat transport: the card, signed, settles in the same message.
const chat = new Chat(new PaymentChatTransport({ baseUrl, fields: () => ({ walletAddress: user }) }));
await chat.sendMessage({ text: question });
const asked = chat.messages[1];
const card = asked?.parts.find((part) => part.type === "data-payment");
if (card?.type !== "data-payment") throw new Error("no payment card");
const cardStatus = card.data.status;
await chat.sendMessage(undefined, approvalBody(await signEvmApproval(card.data, wallet)));
const resumed = chat.messages[1];
const settledCard = resumed?.parts.find((part) => part.type === "data-payment");

// 4. A refusal before the stream is a typed error.
let refused: { status: number; code: string } | undefined;
try {
  await new ChatClient({ baseUrl }).chat({ messages: [], walletAddress: user });
} catch (error) {
  if (error instanceof ChatHttpError) refused = { status: error.status, code: error.code };
}

console.log(
  JSON.stringify({
    notAny,
    fetch: { finishReason, statuses, transaction, text: text.length > 0 },
    approval: {
      first: first.finish.finishReason,
      second: second.finish.finishReason,
      transaction: second.finish.transactionHash,
    },
    useChat: {
      asked: asked?.metadata?.finishReason,
      cardStatus,
      sameMessage: resumed?.id === asked?.id,
      settled: settledCard?.type === "data-payment" ? settledCard.data.status : undefined,
      finish: resumed?.metadata?.finishReason,
    },
    refused,
  }),
);
