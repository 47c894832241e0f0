import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { ChatClient, type ChatMessage, recentMessages } from "../client/index.js";
import { type CliOptions, parseCliArgs, USAGE, USAGE_ALL, UsageError } from "./args.js";
import { EXIT } from "./exit.js";
import { Interrupts, Lines } from "./input.js";
import { keyFileWarning, type LocalKey, loadKeyFile } from "./keys.js";
import { listPayments } from "./payments.js";
import { colorFor, Renderer } from "./render.js";
import { type Display, JsonDisplay, type Session, sendTurn } from "./session.js";
import { openCliTab } from "./tab.js";

/** `x402-chat-agent mcp`: the stdio MCP bridge (src/cli/mcp.ts); the bin dispatches to it. */
export { mcpMain } from "./mcp.js";
/** `x402-chat-agent signer new`: a key for SIGNERS_FILE (src/cli/signer.ts); the bin dispatches to it. */
export { signerMain } from "./signer.js";

/**
 * The terminal chat: `x402-chat-agent chat [question] [options]` (`--help` lists them, and
 * docs/clients.md). One-shot with a question, else interactive. Resolves to the exit code.
 */

export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** The options, or the exit code when there is nothing more to do (help, version, a usage error). */
async function readOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<{ options: CliOptions; key: LocalKey | undefined } | { exit: number }> {
  try {
    const options = parseCliArgs(argv, env);
    if (options.command === "help") {
      out(options.helpAll ? USAGE_ALL : USAGE);
      return { exit: EXIT.ok };
    }
    if (options.command === "version") {
      out(`${version()}\n`);
      return { exit: EXIT.ok };
    }
    const key = options.keyFile ? await loadKeyFile(options.keyFile) : undefined;
    if (
      key &&
      options.wallet &&
      options.wallet.toLowerCase() !== key.address.toLowerCase() &&
      key.chain === "evm"
    )
      throw new UsageError(`--wallet ${options.wallet} is not the key file's wallet ${key.address}`);
    if (key && options.wallet && options.wallet !== key.address && key.chain === "solana")
      throw new UsageError(`--wallet ${options.wallet} is not the key file's wallet ${key.address}`);
    return { options, key };
  } catch (error) {
    if (error instanceof UsageError) {
      // One line (the usage itself would push it off the screen), pointing at --help when it fits.
      const line = `x402-chat-agent: ${error.message}`;
      err(line.length <= 66 ? `${line} (see --help)\n` : `${line}\n`);
      return { exit: EXIT.usage };
    }
    throw error;
  }
}

export async function main(argv: string[], io: Io): Promise<number> {
  const errWrite = (text: string) => {
    io.stderr.write(text);
  };
  const outWrite = (text: string) => {
    io.stdout.write(text);
  };
  const read = await readOptions(argv, io.env, outWrite, errWrite);
  if ("exit" in read) return read.exit;
  const { options, key } = read;
  if (options.command === "payments") return listPayments(options, { out: outWrite, err: errWrite }, key);

  const wallet = options.wallet ?? key?.address;
  const color = colorFor(Boolean(io.stderr.isTTY), io.env);
  const display: Display = options.json
    ? new JsonDisplay(outWrite, errWrite)
    : new Renderer(
        { write: outWrite, isTTY: Boolean(io.stdout.isTTY) },
        {
          write: errWrite,
          isTTY: Boolean(io.stderr.isTTY),
          columns: () => (io.stderr as { columns?: number }).columns,
        },
        { color },
      );
  const warning = options.keyFile ? await keyFileWarning(options.keyFile) : undefined;
  if (warning) display.alert(warning);
  const client = chatClient(options, display);
  const interactive = options.question === undefined;
  // Lines come from stdin: questions (interactive) and approval answers (when stdin is a terminal,
  // or in an interactive session fed by a pipe).
  const canAsk = interactive || Boolean(io.stdin.isTTY);
  const rl = canAsk
    ? createInterface({
        input: io.stdin,
        output: io.stderr,
        terminal: Boolean(io.stdin.isTTY && io.stderr.isTTY),
      })
    : undefined;
  const lines = rl ? new Lines(rl, errWrite) : undefined;
  const session = sessionOf(client, display, options, key, wallet, lines);
  // --tab: one signature now, the tab's token on every turn, closed at the end (tab.ts).
  const tab =
    options.tab && key
      ? await openCliTab(options, key, display, lines && ((q) => lines.answer(q)))
      : undefined;
  if (options.tab && !tab) {
    display.close();
    rl?.close();
    return EXIT.refused;
  }
  if (tab) session.fields = { ...session.fields, tab: tab.token };

  const interrupts = new Interrupts(lines, rl);
  rl?.on("SIGINT", interrupts.interrupt);
  const onSignal = () => interrupts.interrupt();
  process.on("SIGINT", onSignal);
  try {
    if (!interactive) {
      const outcome = await sendTurn(
        session,
        [{ role: "user", content: options.question ?? "" }],
        interrupts.begin(),
      );
      return outcome.exitCode;
    }
    const paint = (text: string) => (color ? `\x1b[1;36m${text}\x1b[0m` : text);
    display.note(
      `x402 chat · ${options.url}${wallet ? ` · wallet ${wallet}` : " · no wallet (nothing can be paid)"}${key ? " · signs with the key file" : ""}`,
    );
    display.note(
      "Ask anything; /new forgets the conversation, /exit or Ctrl-D quits, Ctrl-C stops an answer.",
    );
    return await converse(session, lines, interrupts, paint("you › "), errWrite);
  } finally {
    await tab?.close();
    process.off("SIGINT", onSignal);
    display.close();
    rl?.close();
  }
}

function chatClient(options: CliOptions, display: Display): ChatClient {
  return new ChatClient({
    baseUrl: options.url,
    ...(options.token ? { token: options.token } : {}),
    rateLimitRetry: options.retry,
    onRateLimited: ({ waitSeconds }) =>
      display.note(`Rate limited: waiting ${waitSeconds} s as the service asks...`),
  });
}

/** What every request of this chat carries, and how it asks the person. */
function sessionOf(
  client: ChatClient,
  display: Display,
  options: CliOptions,
  key: LocalKey | undefined,
  wallet: string | undefined,
  lines: Lines | undefined,
): Session {
  return {
    client,
    display,
    url: options.url,
    fields: {
      ...(wallet ? { walletAddress: wallet } : {}),
      ...(options.spendingLimits ? { spendingLimits: options.spendingLimits } : {}),
      ...(options.model ? { model: options.model } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    },
    framing: options.sse ? "sse" : "lines",
    key,
    yes: options.yes,
    ask: lines ? (question) => lines.answer(question) : undefined,
  };
}

/** The interactive chat: a question per line, the conversation kept, until the input ends. */
async function converse(
  session: Session,
  lines: Lines | undefined,
  interrupts: Interrupts,
  prompt: string,
  errWrite: (text: string) => void,
): Promise<number> {
  const { display } = session;
  let messages: ChatMessage[] = [];
  let lastExit: number = EXIT.ok;
  for (;;) {
    const line = await lines?.next(prompt);
    if (line === undefined) return interrupts.quit ? EXIT.interrupted : lastExit;
    const text = line.trim();
    if (text === "") continue;
    if (text === "/exit" || text === "/quit") return lastExit;
    if (text === "/new") {
      messages = [];
      display.note("(a new conversation)");
      continue;
    }
    if (text === "/help") {
      display.note("/new forgets the conversation; /exit quits; Ctrl-C stops an answer.");
      continue;
    }
    const outcome = await sendTurn(
      session,
      // The oldest messages go first once the service's bounds would be passed.
      recentMessages([...messages, { role: "user", content: text }]),
      interrupts.begin(),
    );
    interrupts.end();
    lastExit = outcome.exitCode;
    // A refused request leaves the conversation as it was; an answered one grows it.
    if (outcome.exitCode !== EXIT.refused) messages = outcome.messages;
    errWrite("\n");
  }
}
