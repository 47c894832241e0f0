import { readFileSync } from "node:fs";
import { createInterface, type Interface } from "node:readline";
import { ChatClient, type ChatMessage } from "../client/index.js";
import { type CliOptions, parseCliArgs, USAGE, USAGE_ALL, UsageError } from "./args.js";
import { EXIT } from "./exit.js";
import { keyFileWarning, type LocalKey, loadKeyFile } from "./keys.js";
import { listPayments } from "./payments.js";
import { colorFor, Renderer } from "./render.js";
import { type Display, Interrupted, JsonDisplay, type Session, sendTurn } from "./session.js";

/** `x402-chat-agent mcp`: the stdio MCP bridge (src/cli/mcp.ts); the bin dispatches to it. */
export { mcpMain } from "./mcp.js";

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

/** Lines typed by the person, read one at a time (questions and approval answers share them). */
class Lines {
  private readonly queue: string[] = [];
  private waiter: ((line: string | undefined) => void) | undefined;
  private closed = false;

  constructor(
    readonly rl: Interface,
    private readonly promptOut: (text: string) => void,
  ) {
    rl.on("line", (line) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(line);
      } else this.queue.push(line);
    });
    rl.on("close", () => {
      this.closed = true;
      this.waiter?.(undefined);
      this.waiter = undefined;
    });
  }

  /** Give up waiting: the pending `next` resolves to undefined (Ctrl-C at a question). */
  cancel(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.(undefined);
  }

  /** The next line, after showing `prompt`; undefined at the end of input. */
  next(prompt: string): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed) return Promise.resolve(undefined);
    if (this.rl.terminal) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    } else this.promptOut(prompt);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

export async function main(argv: string[], io: Io): Promise<number> {
  const errWrite = (text: string) => {
    io.stderr.write(text);
  };
  const outWrite = (text: string) => {
    io.stdout.write(text);
  };
  let options: CliOptions;
  let key: LocalKey | undefined;
  try {
    options = parseCliArgs(argv, io.env);
    if (options.command === "help") {
      outWrite(options.helpAll ? USAGE_ALL : USAGE);
      return EXIT.ok;
    }
    if (options.command === "version") {
      outWrite(`${version()}\n`);
      return EXIT.ok;
    }
    if (options.keyFile) key = await loadKeyFile(options.keyFile);
    if (
      key &&
      options.wallet &&
      options.wallet.toLowerCase() !== key.address.toLowerCase() &&
      key.chain === "evm"
    )
      throw new UsageError(`--wallet ${options.wallet} is not the key file's wallet ${key.address}`);
    if (key && options.wallet && options.wallet !== key.address && key.chain === "solana")
      throw new UsageError(`--wallet ${options.wallet} is not the key file's wallet ${key.address}`);
  } catch (error) {
    if (error instanceof UsageError) {
      // One line (the usage itself would push it off the screen), pointing at --help when it fits.
      const line = `x402-chat-agent: ${error.message}`;
      errWrite(line.length <= 66 ? `${line} (see --help)\n` : `${line}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  if (options.command === "payments") return listPayments(options, { out: outWrite, err: errWrite });

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
  const client = new ChatClient({
    baseUrl: options.url,
    ...(options.token ? { token: options.token } : {}),
    rateLimitRetry: options.retry,
    onRateLimited: ({ waitSeconds }) =>
      display.note(`Rate limited: waiting ${waitSeconds} s as the service asks...`),
  });
  const fields: Session["fields"] = {
    ...(wallet ? { walletAddress: wallet } : {}),
    ...(options.spendingLimits ? { spendingLimits: options.spendingLimits } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
  };
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
  const session: Session = {
    client,
    display,
    url: options.url,
    fields,
    framing: options.sse ? "sse" : "lines",
    key,
    yes: options.yes,
    ask: lines ? (question) => lines.next(question) : undefined,
  };

  let current: AbortController | undefined;
  let quit = false;
  const interrupt = () => {
    if (current) {
      current.abort(new Interrupted("interrupted"));
      lines?.cancel();
    } else {
      quit = true;
      rl?.close();
    }
  };
  rl?.on("SIGINT", interrupt);
  const onSignal = () => interrupt();
  process.on("SIGINT", onSignal);

  try {
    if (!interactive) {
      current = new AbortController();
      const outcome = await sendTurn(
        session,
        [{ role: "user", content: options.question ?? "" }],
        current.signal,
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
    let messages: ChatMessage[] = [];
    let lastExit: number = EXIT.ok;
    for (;;) {
      const line = await lines?.next(paint("you › "));
      if (line === undefined) return quit ? EXIT.interrupted : lastExit;
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
      current = new AbortController();
      const outcome = await sendTurn(session, [...messages, { role: "user", content: text }], current.signal);
      current = undefined;
      lastExit = outcome.exitCode;
      // A refused request leaves the conversation as it was; an answered one grows it.
      if (outcome.exitCode !== EXIT.refused) messages = outcome.messages;
      errWrite("\n");
    }
  } finally {
    process.off("SIGINT", onSignal);
    display.close();
    rl?.close();
  }
}
