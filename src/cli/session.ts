import {
  type ApprovalAnswer,
  type ChatClient,
  ChatHttpError,
  type ChatMessage,
  type ChatRequestBody,
  checkSolanaApproval,
  describeApproval,
  type FinishPayload,
  type Framing,
  type PaymentUpdate,
  ProtocolError,
  rejectApproval,
  resumeBody,
  type StreamEvent,
  withAssistantText,
} from "../client/index.js";
import { utcClock } from "../protocol/clock.js";
import { networkLabel } from "../protocol/networks.js";
import { isUnresolved } from "../protocol/status.js";
import { EXIT, exitCodeFor } from "./exit.js";
import { canSign, type LocalKey, signWith } from "./keys.js";
import { terminalLine } from "./terminal-text.js";

/** Where a turn is shown: the terminal renderer, or raw JSON lines (`--json`). */
export interface Display {
  start(): void;
  event(event: StreamEvent): void;
  note(text: string): void;
  alert(text: string): void;
  print(text: string): void;
  close(): void;
}

/** Raw events, one JSON object a line, on stdout; notes stay on stderr, plain. */
export class JsonDisplay implements Display {
  constructor(
    private readonly out: (text: string) => void,
    private readonly err: (text: string) => void,
  ) {}
  start(): void {}
  event(event: StreamEvent): void {
    this.out(`${JSON.stringify(event)}\n`);
  }
  note(text: string): void {
    this.err(`${terminalLine(text)}\n`);
  }
  alert(text: string): void {
    this.err(`${terminalLine(text)}\n`);
  }
  print(text: string): void {
    this.err(terminalLine(text.endsWith("\n") ? text : `${text}\n`));
  }
  close(): void {}
}

export interface Session {
  client: ChatClient;
  display: Display;
  /** The service URL, for the resume instructions. */
  url: string;
  /** Request fields besides the messages (wallet, limits, model...). */
  fields: Omit<ChatRequestBody, "messages" | "approval">;
  framing: Framing;
  key: LocalKey | undefined;
  /** Approve with the key without asking. */
  yes: boolean;
  /** Ask the person; absent when nobody can answer (stdin is not a terminal, one-shot). */
  ask: ((question: string) => Promise<string | undefined>) | undefined;
}

export interface TurnOutcome {
  exitCode: number;
  finish: FinishPayload | undefined;
  /** The conversation after the turn, the assistant's words included: the next turn sends it. */
  messages: ChatMessage[];
}

/** The abort reason of Ctrl-C. */
export class Interrupted extends Error {
  override name = "Interrupted";
}

/**
 * One turn of the terminal chat, sent to the service (the agent's `runTurn` answers it there):
 * show it as it streams, and when it stops for approval, answer (sign with the key file, reject,
 * or a signature pasted in) and resume, until the turn really ends.
 */
export async function sendTurn(
  session: Session,
  messages: ChatMessage[],
  signal?: AbortSignal,
): Promise<TurnOutcome> {
  let body: ChatRequestBody = { ...session.fields, messages };
  let conversation = messages;
  for (;;) {
    session.display.start();
    let text = "";
    const updates = new Map<string, PaymentUpdate>();
    let finish: FinishPayload | undefined;
    let streaming = false;
    try {
      const turn = await session.client.chat(body, {
        framing: session.framing,
        ...(signal ? { signal } : {}),
      });
      streaming = true;
      for await (const event of turn) {
        session.display.event(event);
        if (event.type === "text") text += event.text;
        else if (event.type === "payment") updates.set(event.payment.paymentId, event.payment);
        else if (event.type === "finish") finish = event.finish;
      }
    } catch (error) {
      const outcome = streaming ? brokeOff(session, error, updates) : failure(session, error);
      session.display.close();
      return { ...outcome, finish, messages: withAssistantText(conversation, text) };
    }
    session.display.close();
    conversation = withAssistantText(body.messages, text);
    if (!finish) return { exitCode: EXIT.error, finish, messages: conversation };
    if (finish.finishReason !== "approval-required") {
      return { exitCode: exitCodeFor(finish.finishReason), finish, messages: conversation };
    }
    const waiting = (finish.approvals ?? [])
      .map((a) => updates.get(a.paymentId))
      .find((u): u is PaymentUpdate => u?.approval !== undefined);
    if (!waiting) {
      session.display.alert("The turn awaits an approval, but no p: update said what to sign.");
      return { exitCode: EXIT.approvalRequired, finish, messages: conversation };
    }
    const answer = await decide(session, waiting, body, text);
    if (signal?.aborted) {
      session.display.alert("(interrupted: the payment stays pending until it expires)");
      return { exitCode: EXIT.interrupted, finish, messages: conversation };
    }
    if (!answer) return { exitCode: EXIT.approvalRequired, finish, messages: conversation };
    session.display.note("reject" in answer ? "Rejecting the payment..." : "Signed. Resuming...");
    body = resumeBody(body, text, answer);
  }
}

/**
 * The stream ended without its `d:` line (the service went away, the connection dropped): exit 1,
 * and a payment it left under way is named with what to do, since it may have gone through.
 */
function brokeOff(
  session: Session,
  error: unknown,
  updates: Map<string, PaymentUpdate>,
): { exitCode: number } {
  if (error instanceof Interrupted || (error instanceof Error && error.name === "AbortError"))
    return failure(session, error);
  const { display } = session;
  display.alert(`✗ the stream broke off: ${error instanceof Error ? error.message : String(error)}`);
  for (const update of updates.values()) {
    if (!isUnresolved(update.status)) continue;
    display.alert(
      `  payment ${update.paymentId} was ${update.status}: it may have gone through. Do not pay again; ` +
        "`chat payments` shows its outcome once the service is back.",
    );
  }
  return { exitCode: EXIT.error };
}

function failure(session: Session, error: unknown): { exitCode: number } {
  const { display } = session;
  if (error instanceof Interrupted || (error instanceof Error && error.name === "AbortError")) {
    display.alert("(interrupted)");
    return { exitCode: EXIT.interrupted };
  }
  if (error instanceof ChatHttpError) {
    display.alert(`✗ HTTP ${error.status} ${error.code}: ${error.problem.detail ?? error.problem.title}`);
    for (const field of error.problem.errors ?? []) display.alert(`    ${field.path}: ${field.message}`);
    if (error.retryAfterSeconds !== undefined)
      display.note(`(the service says: retry after ${error.retryAfterSeconds} s)`);
    return { exitCode: EXIT.refused };
  }
  if (error instanceof ProtocolError) {
    display.alert(`✗ the stream broke off: ${error.message}`);
    return { exitCode: EXIT.error };
  }
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  display.alert(
    `✗ cannot reach ${session.url}${code ? ` (${code})` : ""}: ${error instanceof Error ? error.message : String(error)}`,
  );
  // No answer at all: the likeliest cause is a service not started, or another address.
  display.note(UNREACHABLE_HINT);
  return { exitCode: EXIT.refused };
}

/** What to do when nothing answers at the URL. */
export const UNREACHABLE_HINT =
  "  Is the service running? Start it with npm start in its checkout, or give its address with --url or $X402_CHAT_URL.";

/** Decide on one payment awaiting approval; undefined leaves it pending (instructions printed). */
async function decide(
  session: Session,
  update: PaymentUpdate,
  body: ChatRequestBody,
  assistantText: string,
): Promise<ApprovalAnswer | undefined> {
  const { display, key } = session;
  const summary = describeApproval(update);
  display.note(
    `Approval needed: ${summary.amountUsd ? `$${summary.amountUsd}` : "a payment"} to ${summary.payTo ?? "?"} on ${summary.network ? networkLabel(summary.network) : "?"} for ${summary.service}, from ${summary.wallet}, before ${utcClock(summary.expiresAt)}.`,
  );
  const mismatches = [...summary.mismatches, ...(await checkSolanaApproval(update))];
  if (mismatches.length > 0) {
    for (const m of mismatches) display.alert(`✗ what would be signed disagrees with the quote: ${m}`);
    display.alert("Not signing it; rejecting the payment.");
    return rejectApproval(update.paymentId);
  }
  if (key && canSign(key, update)) {
    let yes = session.yes;
    if (!yes && session.ask) {
      const reply = await session.ask(`Approve and sign with ${key.address}? [y/N] `);
      // No answer (end of input, Ctrl-C): say how to approve later, ask nothing more.
      if (reply === undefined) return pending({ ...session, ask: undefined }, update, body, assistantText);
      yes = /^y(es)?$/i.test(reply.trim());
      if (!yes) return rejectApproval(update.paymentId);
    }
    if (yes) return signWith(key, update);
    // A key, but nobody to say y/n (one-shot, stdin not a terminal): say how to sign here next time.
    display.note(
      `Not signed: nobody can answer y/n here. Add --yes to sign with the key file without asking.`,
    );
    return pending(session, update, body, assistantText);
  }
  if (key)
    display.alert(
      `The key file is for ${key.address} (${key.chain}); this payment must be signed by ${summary.wallet}.`,
    );
  return pending(session, update, body, assistantText);
}

/** Print what to sign and the exact resume body; in a terminal, take a pasted answer. */
async function pending(
  session: Session,
  update: PaymentUpdate,
  body: ChatRequestBody,
  assistantText: string,
): Promise<ApprovalAnswer | undefined> {
  printInstructions(session, update, body, assistantText);
  if (!session.ask) return undefined;
  const evm = update.approval?.sign.kind === "evm-typed-data";
  const reply = (
    await session.ask(
      `Paste the ${evm ? "signature (0x...)" : "signed transaction (base64)"}, n to reject, or Enter to leave it pending: `,
    )
  )?.trim();
  if (!reply) return undefined;
  if (/^n(o)?$/i.test(reply)) return rejectApproval(update.paymentId);
  // 65 bytes from a plain key; longer from a smart-contract wallet (EIP-1271).
  if (/^0x(?:[0-9a-fA-F]{2}){1,4096}$/.test(reply))
    return { paymentId: update.paymentId, signature: reply as `0x${string}` };
  if (!evm && /^[A-Za-z0-9+/]+={0,2}$/.test(reply))
    return { paymentId: update.paymentId, transaction: reply };
  session.display.alert(
    "That is neither a hex signature nor a base64 transaction; the payment stays pending.",
  );
  return undefined;
}

export function printInstructions(
  session: Pick<Session, "display" | "url">,
  update: PaymentUpdate,
  body: ChatRequestBody,
  assistantText: string,
): void {
  const approval = update.approval;
  if (!approval) return;
  const { display } = session;
  const placeholder = approval.sign.kind === "evm-typed-data" ? "<SIGNATURE>" : "<SIGNED_TRANSACTION_BASE64>";
  const field = approval.sign.kind === "evm-typed-data" ? "signature" : "transaction";
  const answered = resumeBody(body, assistantText, {
    paymentId: update.paymentId,
    [field]: placeholder,
  } as ApprovalAnswer);
  const resume = answered.tab === undefined ? answered : { ...answered, tab: "<TAB_TOKEN>" };
  if (approval.sign.kind === "evm-typed-data") {
    display.print(
      `To approve, sign this EIP-712 typed data with ${approval.wallet} (${approval.sign.method}):`,
    );
    display.print(JSON.stringify(approval.sign.typedData, null, 2));
  } else {
    display.print(
      `To approve, sign this transaction (base64) with ${approval.wallet} (${approval.sign.method}):`,
    );
    display.print(approval.sign.transaction);
  }
  display.print(
    `Then POST ${new URL("/api/chat", session.url).href} with this body (and the Authorization header used before, if any), ${placeholder} replaced by the ${field === "signature" ? "0x signature (65 bytes)" : "signed transaction, base64"}${resume === answered ? "" : " and <TAB_TOKEN> by the tab's token"}, before ${approval.expiresAt}:`,
  );
  display.print(JSON.stringify(resume));
  display.print(
    `To reject it instead, send "approval": ${JSON.stringify({ paymentId: update.paymentId, reject: true })}.`,
  );
}
