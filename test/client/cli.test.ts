import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCliArgs } from "../../src/cli/args.js";
import { EXIT, exitCodeFor } from "../../src/cli/exit.js";
import { keyFileWarning, parseKey } from "../../src/cli/keys.js";
import { main } from "../../src/cli/main.js";
import { colorFor, paymentLine, Renderer } from "../../src/cli/render.js";
import { Interrupted, JsonDisplay, sendTurn } from "../../src/cli/session.js";
import { ChatClient, type PaymentUpdate } from "../../src/client/index.js";
import { FINISH_REASONS } from "../../src/errors/index.js";
import { answerCutMidPayment, buildService, scratchDir, singleModelRegistry, textModel } from "../helpers.js";
import { memoryIo, type Served, serve } from "./support.js";

const money = (usd: string) => ({ atomic: String(Math.round(Number(usd) * 1e6)), usd });
const meter = (limit: string, remaining: string, after?: string) => ({
  limit: money(limit),
  spent: money("0"),
  pending: money("0"),
  remaining: money(remaining),
  ...(after ? { remainingAfter: money(after) } : {}),
});
const QUOTED: PaymentUpdate = {
  paymentId: "pay_1",
  status: "quoted",
  service: { url: "http://127.0.0.1:4021/weather", name: "Weather now" },
  amount: { atomic: "10000", usd: "0.01" },
  network: "eip155:31337",
  budget: {
    perTransaction: meter("1.00", "1.00", "0.99"),
    perRequest: meter("2.00", "2.00", "1.99"),
    daily: meter("10.00", "10.00", "9.99"),
  },
};

describe("command line", () => {
  it("one-shot question, options, limits", () => {
    const options = parseCliArgs(
      [
        "chat",
        "What's",
        "the weather?",
        "--wallet",
        "0xabc",
        "--per-request",
        "0.50",
        "--networks",
        "eip155:31337, solana:x",
        "--json",
      ],
      {},
    );
    expect(options).toMatchObject({
      command: "chat",
      question: "What's the weather?",
      url: "http://127.0.0.1:3000",
      wallet: "0xabc",
      spendingLimits: { perRequest: "0.50", allowedNetworks: ["eip155:31337", "solana:x"] },
      json: true,
      retry: true,
    });
  });

  it("interactive without a question; environment defaults; flags win", () => {
    const env = { X402_CHAT_URL: "http://h:1", X402_CHAT_TOKEN: "t-env", X402_CHAT_WALLET: "0xenv" };
    expect(parseCliArgs([], env)).toMatchObject({
      command: "chat",
      question: undefined,
      url: "http://h:1",
      token: "t-env",
      wallet: "0xenv",
    });
    expect(parseCliArgs(["chat", "--token", "t-flag", "--no-retry"], env)).toMatchObject({
      token: "t-flag",
      retry: false,
    });
  });

  it("--devnet reads the token and a wallet of the manifest; a bare --devnet leaves the question alone", () => {
    const dir = scratchDir("cli");
    const path = join(dir, "manifest.json");
    writeFileSync(
      path,
      JSON.stringify({
        devToken: "dev-token",
        evm: {
          wallets: [
            { role: "payer", address: "0xP" },
            { role: "user", address: "0xU" },
          ],
        },
      }),
    );
    const env = { DEVNET_MANIFEST: path };
    expect(parseCliArgs(["chat", "--devnet", "hello"], env)).toMatchObject({
      token: "dev-token",
      wallet: "0xP",
      question: "hello",
    });
    expect(parseCliArgs(["chat", "--devnet", "user", "hello"], env)).toMatchObject({
      wallet: "0xU",
      token: undefined,
      question: "hello",
    });
    // A key file names its own wallet (a Solana key pays from Solana): the role's EVM wallet stays out.
    const keyed = parseCliArgs(["chat", "--devnet", "user", "--key-file", "k.json", "hello"], env);
    expect(keyed).toMatchObject({ keyFile: "k.json", token: undefined });
    expect(keyed.wallet).toBeUndefined();
  });

  it("--devnet: a mistyped role is an error listing the roles, never the question; --devnet=ROLE always works", () => {
    const dir = scratchDir("cli");
    const path = join(dir, "manifest.json");
    writeFileSync(
      path,
      JSON.stringify({
        devToken: "dev-token",
        chatUrl: "http://127.0.0.1:4567",
        evm: {
          wallets: [
            { role: "payer", address: "0xP" },
            { role: "payer-low", address: "0xL" },
            { role: "user", address: "0xU" },
          ],
        },
      }),
    );
    const env = { DEVNET_MANIFEST: path, X402_CHAT_URL: "http://elsewhere:1" };
    for (const typo of ["usr", "User", "uesr", "payr", "pay", "payer-lo", "payers"])
      expect(() => parseCliArgs(["chat", "--devnet", typo, "What's the weather?"], env), typo).toThrow(
        `--devnet ${typo}: not a role; the roles: payer, payer-low, user`,
      );
    expect(() => parseCliArgs(["chat", "--devnet=usr", "hi"], env)).toThrow(
      "--devnet=usr: not a role; the roles: payer, payer-low, user",
    );
    // Words that are no role's typo stay the question (the payer, as before).
    expect(parseCliArgs(["chat", "--devnet", "weather", "in Paris"], env)).toMatchObject({
      wallet: "0xP",
      question: "weather in Paris",
    });
    // After `--` nothing is a role.
    expect(parseCliArgs(["chat", "--devnet", "--", "usr"], env)).toMatchObject({
      wallet: "0xP",
      question: "usr",
    });
    expect(parseCliArgs(["chat", "--devnet=user", "usr"], env)).toMatchObject({
      wallet: "0xU",
      question: "usr",
    });
    expect(parseCliArgs(["chat", "--devnet", "payer-low", "hi"], env)).toMatchObject({
      wallet: "0xL",
      token: "dev-token",
    });
    // The service's URL comes from the manifest too (over the environment); a flag still wins.
    expect(parseCliArgs(["chat", "--devnet"], env).url).toBe("http://127.0.0.1:4567");
    expect(parseCliArgs(["chat", "--devnet", "--url", "http://mine:2"], env).url).toBe("http://mine:2");
    expect(parseCliArgs(["chat"], env).url).toBe("http://elsewhere:1");
    // A role the manifest has no wallet for names those it has.
    writeFileSync(
      path,
      JSON.stringify({ devToken: "t", evm: { wallets: [{ role: "payer", address: "0xP" }] } }),
    );
    expect(() => parseCliArgs(["chat", "--devnet=user"], env)).toThrow(
      /has no user wallet \(its roles: payer\)/,
    );
  });

  it("payments: the history command, its filters checked", () => {
    expect(
      parseCliArgs(["chat", "payments", "--json", "--status", "settled,failed", "--limit", "5"], {}),
    ).toMatchObject({
      command: "payments",
      json: true,
      history: { status: ["settled", "failed"], limit: 5 },
    });
    expect(parseCliArgs(["payments", "--since", "2026-11-25"], {}).history.since?.toISOString()).toBe(
      "2026-11-25T00:00:00.000Z",
    );
    // More than the one word is a question.
    expect(parseCliArgs(["chat", "payments", "today?"], {})).toMatchObject({ command: "chat" });
    expect(() => parseCliArgs(["payments", "--limit", "0"], {})).toThrow(/--limit/);
    expect(() => parseCliArgs(["payments", "--since", "last week"], {})).toThrow(/--since must be a date/);
  });

  it("refuses what it cannot use", () => {
    expect(() => parseCliArgs(["chat", "--bogus"], {})).toThrow("unknown option --bogus");
    expect(() => parseCliArgs(["pay"], {})).toThrow(/unknown command/);
    expect(() => parseCliArgs(["--per-request", "lots"], {})).toThrow(/USD/);
    expect(() => parseCliArgs(["--model", "gpt"], {})).toThrow(/--model/);
    expect(() => parseCliArgs(["--devnet"], { DEVNET_MANIFEST: "/nonexistent" })).toThrow(/manifest/);
  });

  it("every finish reason has an exit code", () => {
    expect(Object.fromEntries(FINISH_REASONS.map((r) => [r, exitCodeFor(r)]))).toEqual({
      stop: 0,
      "payment-complete": 0,
      "payment-failed": 6,
      "payment-unclear": 9,
      "limit-exceeded": 4,
      "insufficient-balance": 5,
      "service-unavailable": 7,
      "approval-required": 8,
      error: 1,
    });
  });
});

describe("key files", () => {
  it("an EVM hex key, with or without 0x", async () => {
    const key = await parseKey("5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a\n");
    expect(key).toMatchObject({ chain: "evm", address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" });
  });

  it("a solana-keygen JSON array", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const secret = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
    const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    const key = await parseKey(JSON.stringify([...secret, ...pub]));
    expect(key.chain).toBe("solana");
  });

  it("warns when others may read the key file", async () => {
    const dir = scratchDir("cli-key");
    writeFileSync(join(dir, "open.key"), "x", { mode: 0o644 });
    writeFileSync(join(dir, "closed.key"), "x", { mode: 0o600 });
    expect(await keyFileWarning(join(dir, "open.key"))).toMatch(/can be read by other users \(mode 644\)/);
    expect(await keyFileWarning(join(dir, "closed.key"))).toBeUndefined();
  });

  it("refuses anything else without echoing it", async () => {
    await expect(parseKey("not a key")).rejects.toThrow(/expected an EVM private key/);
    await expect(parseKey("[1,2,3]")).rejects.toThrow(/64 numbers/);
    const error = await parseKey(`0x${"zz".repeat(32)}`).catch((e: unknown) => e);
    expect(String(error)).not.toContain("zz");
  });
});

describe("rendering", () => {
  function capture(isTTY: boolean, color = false) {
    let out = "";
    let err = "";
    const renderer = new Renderer(
      { write: (t) => (out += t), isTTY },
      { write: (t) => (err += t), isTTY },
      { color },
    );
    return { renderer, out: () => out, err: () => err };
  }

  it("a status line: cost, network, status and the budget the meter leaves", () => {
    expect(paymentLine(QUOTED)).toBe(
      "Weather now $0.01 on Local EVM devnet · quoted · leaves $1.99 of $2.00 this request, $9.99 of $10.00 today",
    );
    expect(paymentLine({ ...QUOTED, status: "submitted" })).toBe(
      "Weather now $0.01 on Local EVM devnet · settling",
    );
    expect(
      paymentLine({ ...QUOTED, status: "refused", reason: "perTransaction", budget: undefined }),
    ).toContain("refused: perTransaction");
  });

  it("off a TTY: words on stdout, one line per status change on stderr, no escapes", () => {
    const c = capture(false);
    c.renderer.event({ type: "text", text: "Paying now." });
    c.renderer.event({ type: "payment", payment: QUOTED });
    c.renderer.event({ type: "payment", payment: { ...QUOTED, status: "reserved" } });
    c.renderer.event({ type: "payment", payment: { ...QUOTED, status: "signed" } });
    c.renderer.event({ type: "payment", payment: { ...QUOTED, status: "settled", transaction: "0xfeed" } });
    c.renderer.event({ type: "text", text: "Sunny." });
    c.renderer.close();
    expect(c.out()).toBe("Paying now.\nSunny.\n");
    const lines = c.err().trim().split("\n");
    expect(lines).toHaveLength(3); // quoted, signing (once), settled
    expect(lines[2]).toContain("✓ Weather now $0.01 on Local EVM devnet · settled, tx 0xfeed");
    expect(c.err()).not.toContain("\x1b");
  });

  // Found by a black-box run: a model's words cleared the screen and set the window title.
  it("what a service sends cannot drive the terminal: escapes, bells and bidi overrides are dropped", () => {
    const c = capture(false);
    c.renderer.event({ type: "text", text: "\x1b[2J\x1b]0;pwned\x07\u202egnp.live\u202c ok\rPaid $0" });
    c.renderer.event({
      type: "error",
      error: { code: "service_refused", message: "The service said \x1b[2J\u202egnp.live\u202c.\rOK" },
    });
    c.renderer.close();
    expect(c.out()).toBe("[2J]0;pwnedgnp.live ok\nPaid $0\n");
    for (const unsafe of ["\x1b", "\x07", "\u202e", "\u202c", "\r"])
      expect(`${c.out()}${c.err()}`).not.toContain(unsafe);
    expect(c.err()).toContain("gnp.live");
  });

  // A black-box review (h34): a problem's detail, a malformed line and a service's name in the
  // approval question reached the terminal through the session's own lines, escapes and all.
  it("the session's own lines, which quote the server, cannot drive the terminal either", () => {
    const c = capture(false);
    c.renderer.alert("HTTP 400 bad_request: \x1b]0;PWNED\x07\x1b[2J\x1b]8;;https://evil.example\x07click");
    c.renderer.note("Approval needed: $500 to 0xabc for Weather\r\x1b[2KApproval needed: $0.01");
    c.renderer.print('{"resume":"\u202ecod.exe"}');
    c.renderer.close();
    for (const unsafe of ["\x1b", "\x07", "\u202e", "\r"])
      expect(`${c.out()}${c.err()}`).not.toContain(unsafe);
    expect(c.err()).toContain("Approval needed: $500 to 0xabc for Weather\n[2KApproval needed: $0.01");
  });

  it("on a TTY: one live line redrawn in place, coloured", () => {
    const c = capture(true, true);
    c.renderer.event({ type: "payment", payment: QUOTED });
    c.renderer.event({ type: "payment", payment: { ...QUOTED, status: "settled", transaction: "0xfeed" } });
    c.renderer.close();
    expect(c.err().split("\n").filter(Boolean)).toHaveLength(1);
    expect(c.err()).toContain("\r\x1b[2K");
    expect(c.err()).toContain("\x1b[32m✓");
  });

  it("on a narrow TTY a live line is cut to one row; its final state is shown whole", () => {
    let err = "";
    const renderer = new Renderer(
      { write: () => {}, isTTY: true },
      { write: (t) => (err += t), isTTY: true, columns: () => 40 },
      { color: false },
    );
    renderer.event({ type: "payment", payment: { ...QUOTED, status: "submitted" } });
    const live = err.split("\r\x1b[2K").at(-1) ?? "";
    expect(live.length).toBeLessThanOrEqual(39);
    expect(live.endsWith("…")).toBe(true);
    renderer.event({ type: "payment", payment: { ...QUOTED, status: "settled", transaction: "0xfeed" } });
    renderer.close();
    expect(err.split("\r\x1b[2K").at(-1)).toContain("settled, tx 0xfeed");
  });

  it("colour only on a TTY and never with NO_COLOR", () => {
    expect(colorFor(true, {})).toBe(true);
    expect(colorFor(false, {})).toBe(false);
    expect(colorFor(true, { NO_COLOR: "1" })).toBe(false);
    expect(colorFor(true, { TERM: "dumb" })).toBe(false);
  });
});

describe("main() against the real service", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(buildService());
  });
  afterAll(async () => {
    await served?.close();
  });

  it("one-shot: the answer on stdout, the finish on stderr, exit 0", async () => {
    const m = memoryIo();
    const code = await main(["chat", "hi", "--url", served.url], m.io);
    expect(code).toBe(0);
    expect(m.out()).toBe("Hello there!\n");
    expect(m.err()).toContain("(stop)");
  });

  it("--json: one event a line, parseable", async () => {
    const m = memoryIo();
    expect(await main(["chat", "hi", "--url", served.url, "--json", "--sse"], m.io)).toBe(0);
    const events = m
      .out()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.map((e) => e.type)).toEqual(["text", "text", "text", "finish"]);
  });

  it("interactive from a pipe: each line a turn, the conversation kept, /exit quits", async () => {
    const m = memoryIo({}, "hi\nmore\n/exit\n");
    expect(await main(["chat", "--url", served.url], m.io)).toBe(0);
    expect(m.out()).toBe("Hello there!\nHello there!\n");
  });

  /*
   * Found by a black-box run: from the 51st turn on, every turn was refused (`messages: must hold
   * at most 100 messages`) until /new. The oldest messages now go first, as on the web page.
   */
  it("interactive: a conversation past the service's 100 messages goes on, the oldest dropped", async () => {
    const m = memoryIo({}, `${"again\n".repeat(55)}/exit\n`);
    expect(await main(["chat", "--url", served.url], m.io)).toBe(0);
    expect(m.out()).toBe("Hello there!\n".repeat(55));
    expect(m.err()).not.toContain("HTTP 400");
  });

  it("exit 3 when the service refuses the request, 2 on a usage error, 3 when nothing listens", async () => {
    const refused = memoryIo();
    expect(await main(["chat", "hi", "--url", served.url, "--wallet", "0x12"], refused.io)).toBe(
      EXIT.refused,
    );
    expect(refused.err()).toContain("HTTP 400 invalid_wallet");
    const usage = memoryIo();
    expect(await main(["chat", "--frobnicate"], usage.io)).toBe(EXIT.usage);
    // One clear line, without parseArgs' quoting or its advice about `--`.
    expect(usage.err()).toBe("x402-chat-agent: unknown option --frobnicate (see --help)\n");
    const missing = memoryIo();
    expect(await main(["chat", "--url"], missing.io)).toBe(EXIT.usage);
    expect(missing.err()).toBe("x402-chat-agent: --url needs a value (see --help)\n");
    const down = memoryIo();
    expect(await main(["chat", "hi", "--url", "http://127.0.0.1:9"], down.io)).toBe(EXIT.refused);
    expect(down.err()).toContain("cannot reach http://127.0.0.1:9");
    // And what to do about it.
    expect(down.err()).toContain("Is the service running? Start it with npm start");
  });
});

/*
 * Found by a black-box run: a service killed while a payment settled read "cannot reach" (exit 3,
 * "refused before the stream"), with no word of the payment that may have gone through.
 */
async function listenOn(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a stream that breaks off mid-payment", () => {
  it("exits 1, says the stream broke off, and names the payment that may have gone through", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "X-Chat-Protocol": "1" });
      res.write(answerCutMidPayment(), () => {
        setTimeout(() => res.socket?.destroy(), 20);
      });
    });
    const { url, close } = await listenOn(server);
    try {
      const m = memoryIo();
      expect(await main(["chat", "weather", "--url", url], m.io)).toBe(EXIT.error);
      expect(m.err()).toContain("the stream broke off");
      expect(m.err()).toContain("payment pay_cut was submitted: it may have gone through");
      expect(m.err()).not.toContain("cannot reach");
    } finally {
      await close();
    }
  });
});

describe("help", () => {
  it("--help fits 80x24; --help all has every option and the exit codes", async () => {
    const short = memoryIo();
    expect(await main(["chat", "--help"], short.io)).toBe(EXIT.ok);
    const lines = short.out().trimEnd().split("\n");
    expect(lines.length).toBeLessThanOrEqual(23); // and the shell's prompt after it
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
    const all = memoryIo();
    expect(await main(["chat", "--help", "all"], all.io)).toBe(EXIT.ok);
    expect(all.out().length).toBeGreaterThan(short.out().length);
    expect(
      Math.max(
        ...all
          .out()
          .split("\n")
          .map((l) => l.length),
      ),
    ).toBeLessThanOrEqual(80);
    // Every option parseArgs knows is in the long help, and every exit code.
    for (const option of ["--url", "--networks", "--services", "--temperature", "--max-tokens", "--sse"])
      expect(all.out()).toContain(option);
    for (const code of Object.values(EXIT)) expect(all.out()).toMatch(new RegExp(`\\b${code} `));
    const help = memoryIo();
    expect(await main(["help", "all"], help.io)).toBe(EXIT.ok);
    expect(help.out()).toBe(all.out());
  });
});

describe("interrupting a turn", () => {
  let slow: Served;
  beforeAll(async () => {
    slow = await serve(
      buildService(
        {},
        { models: singleModelRegistry(textModel(["a", "b", "c", "d", "e"], { delayMs: 200 })) },
      ),
    );
  });
  afterAll(async () => {
    await slow?.close();
  });

  it("Ctrl-C while an answer streams stops it: exit 130, the words so far kept", async () => {
    let err = "";
    let out = "";
    const controller = new AbortController();
    const display = new JsonDisplay(
      (t) => {
        out += t;
        if (out.includes('"text":"a"')) controller.abort(new Interrupted("interrupted"));
      },
      (t) => {
        err += t;
      },
    );
    const outcome = await sendTurn(
      {
        client: new ChatClient({ baseUrl: slow.url }),
        display,
        url: slow.url,
        fields: {},
        framing: "lines",
        key: undefined,
        yes: false,
        ask: undefined,
      },
      [{ role: "user", content: "hi" }],
      controller.signal,
    );
    expect(outcome.exitCode).toBe(EXIT.interrupted);
    expect(err).toContain("(interrupted)");
    expect(outcome.messages.at(-1)).toEqual({ role: "assistant", content: "a" });
  });
});
