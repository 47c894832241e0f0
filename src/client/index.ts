/**
 * The SDK of the chat service (`@x402-chat-agent/client`): a typed client for `POST /api/chat` and
 * the wallet-approval helpers. Nothing here needs the AI SDK: the `ChatTransport` for its `useChat`
 * is the subpath `@x402-chat-agent/client/ai` (src/client/ai.ts). docs/clients.md shows each in use. Events are decoded by the protocol module's own decoder (src/protocol/stream.ts).
 *
 * ```ts
 * const client = new ChatClient({ baseUrl: "http://127.0.0.1:3000", token });
 * const turn = await client.chat({ messages: [{ role: "user", content: "Weather in Paris?" }], walletAddress });
 * for await (const event of turn) if (event.type === "text") process.stdout.write(event.text);
 * ```
 */

/** The service's stable error codes as a union, to `switch` on a problem's or an `e:` line's `code`. */
export type { ErrorCode } from "../errors/index.js";
export {
  type PaymentHistoryItem,
  type PaymentHistoryPage,
  type PaymentState,
  paymentHistorySchema,
  paymentStateSchema,
} from "../protocol/payment.js";
export {
  type SignInChallenge,
  type SignInFields,
  type SignInRequest,
  signInChallengeSchema,
  signInMessage,
  type WalletSession,
  walletSessionSchema,
} from "../protocol/sign-in.js";
export {
  isCommitted,
  isFinal,
  PAYMENT_STATUS,
  type PaymentStatusFacts,
  type StatusTone,
} from "../protocol/status.js";
export {
  type ApprovalRequest,
  type BudgetMeter,
  decodeLine,
  decodeStream,
  type ErrorPayload,
  type FinishPayload,
  type LimitMeter,
  type Money,
  PAYMENT_STATUSES,
  type PaymentStatus,
  type PaymentSummary,
  type PaymentUpdate,
  PROTOCOL_VERSION,
  ProtocolError,
  StreamDecoder,
  type StreamEvent,
  type WalletRequest,
} from "../protocol/stream.js";
export {
  type ApprovalSummary,
  describeApproval,
  type EvmTypedDataSigner,
  rejectApproval,
  type SolanaApprovalSigner,
  type SolanaModifyingSigner,
  type SolanaPartialSigner,
  signEvmApproval,
  signSolanaApproval,
  toViemTypedData,
  type ViemTypedData,
} from "./approval.js";
export { recentMessages } from "./bounds.js";
export {
  type ChatCallOptions,
  ChatClient,
  type ChatClientOptions,
  type Framing,
  type PaymentListQuery,
  type RateLimitRetry,
} from "./client.js";
export { ChatHttpError, isChatHttpError, type Problem, parseRetryAfter } from "./errors.js";
export {
  type AwaitingUpdate,
  automaticApprovalReason,
  describePaymentApproval,
  networkName,
  PAYMENT_TOOL,
  type PaymentApprovalDescriptor,
  type PaymentToolInput,
  type PaymentToolOutput,
  type PaymentTools,
  refusalReason,
} from "./payment-tool.js";
export {
  type ApprovalAnswer,
  type ChatMessage,
  type ChatRequestBody,
  resumeBody,
  type SpendingLimits,
  type Usd,
  withAssistantText,
} from "./request.js";
export {
  base58,
  type EvmMessageSigner,
  eip1193SignInWallet,
  evmSignInWallet,
  type SignInWallet,
  type SolanaMessageSigner,
  solanaSignInWallet,
} from "./sign-in.js";
export {
  type ApprovalSignFunction,
  ApprovalSigningError,
  type Eip1193Provider,
  type SolanaTransactionSignFunction,
  signApproval,
  type TransportSigner,
  type WalletSigners,
} from "./signer.js";
export { checkSolanaApproval } from "./solana-payment.js";
export { checkSolanaFunding } from "./tab-funding.js";
export {
  awaitingOf,
  type OpenedTab,
  type OpenTabBody,
  TabClient,
  type TabOpened,
  type TabView,
} from "./tabs.js";
export { type ChatResult, ChatTurn, TurnCollector } from "./turn.js";
