import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("node:os", async (original) => ({
  ...(await original<typeof import("node:os")>()),
  userInfo: () => ({ username: "操作员 Jörg", uid: 1, gid: 1, shell: null, homedir: "/" }),
}));

import { EXIT } from "../exit.js";
import { answers, operatorMain } from "./main.js";

/**
 * The operator CLI's errors (unit, docs/deploy.md#operating-it): a bad flag is one line of usage
 * and exit 2; a service that refuses the operator token is one clear line and exit 3. The
 * service is a stubbed fetch: no socket.
 */

const OPERATOR_TOKEN = "w".repeat(40);
const env = { X402_CHAT_URL: "http://service.test", OPERATOR_TOKEN, DATA_DIR: "memory://" };

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await operatorMain(argv, {
    stdout: { write: (t: string) => out.push(t) } as unknown as NodeJS.WritableStream,
    stderr: { write: (t: string) => err.push(t) } as unknown as NodeJS.WritableStream,
    env,
  });
  return { code, out: out.join(""), err: err.join("") };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("operator CLI errors", () => {
  it("a bad flag or a missing value is one line of usage, exit 2, and nothing is sent", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    for (const argv of [
      ["keys", "create"],
      ["keys", "create", "ci", "--daily"],
      ["keys", "create", "ci", "--daily", "-1"],
      ["keys", "create", "ci", "--bogus"],
      ["pause", "--all"],
    ]) {
      const run = await cli(argv);
      expect(run.code, argv.join(" ")).toBe(EXIT.usage);
      expect(run.err, argv.join(" ")).toMatch(/^x402-chat-agent: [^\n]+ \(see --help\)\n$/);
    }
    expect(fetch).not.toHaveBeenCalled();
  });

  it("a wrong OPERATOR_TOKEN: one clear line naming the variable, exit 3, the token not echoed", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () =>
        Response.json(
          { code: "unauthorized", detail: "Send Authorization: Bearer <operator token>." },
          { status: 401, headers: { "Content-Type": "application/problem+json" } },
        ),
      ),
    );
    const run = await cli(["keys", "create", "ci", "--daily", "5"]);
    expect(run.code).toBe(EXIT.refused);
    expect(run.err).toBe(
      "x402-chat-agent: http://service.test refused the operator token: set OPERATOR_TOKEN to the one that service uses (unauthorized)\n",
    );
    expect(run.err + run.out).not.toContain(OPERATOR_TOKEN);
  });

  it("names the operator in X-Operator with the characters the API takes, whatever the user's name", async () => {
    const fetch = vi.fn(async (_url: string, _init?: RequestInit) => Response.json({ pauses: [] }));
    vi.stubGlobal("fetch", fetch);
    const run = await cli(["resume", "--all"]);
    expect(run.code).toBe(EXIT.ok);
    const headers = new Headers(fetch.mock.calls[0]?.[1]?.headers);
    expect(headers.get("x-operator")).toBe("cli:___ J_rg");
  });

  it("a service's refusal reaches the terminal as one line without control characters", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () =>
        Response.json({ code: "invalid_request", detail: "bad\u001b[2J\nname" }, { status: 400 }),
      ),
    );
    const run = await cli(["keys", "create", "ci"]);
    expect(run.code).toBe(EXIT.refused);
    expect(run.err).toBe("x402-chat-agent: bad [2J name (invalid_request)\n");
  });
});

// Found by a review: anything answering at PUBLIC_URL's /healthz was sent the operator token.
describe("finding the local service", () => {
  it("takes only this service's liveness answer, not anything listening there", async () => {
    const answer = (body: string, status = 200) => vi.fn(async () => new Response(body, { status }));
    vi.stubGlobal("fetch", answer('{"status":"ok","openTurns":0,"models":[]}'));
    expect(await answers("http://127.0.0.1:3000")).toBe(true);
    vi.stubGlobal("fetch", answer('{"status":"draining","openTurns":2}', 503));
    expect(await answers("http://127.0.0.1:3000")).toBe(true);
    for (const other of ["ok", "<html>it works</html>", '{"status":"ok"}', "null"]) {
      vi.stubGlobal("fetch", answer(other));
      expect(await answers("http://127.0.0.1:3000"), other).toBe(false);
    }
  });
});
