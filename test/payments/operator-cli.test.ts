/**
 * docs/deploy.md#operating-it: the operator's commands (`keys`, `pause`, `resume`) as a user runs
 * them, in process (`operatorMain`, what bin/x402-chat-agent.mjs runs from the service's build):
 * over HTTP against a running service (X402_CHAT_URL and the operator token), and straight to the
 * store from the service's configuration (the embedded PGlite under DATA_DIR; PostgreSQL with
 * DATABASE_URL). What the CLI changes, the service's auth and payments see.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorMain } from "../../src/cli/operator/main.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { closeServer, listen } from "../../src/service.js";
import { openStore } from "../../src/store/index.js";
import { scratchDir } from "../helpers.js";
import { type Booted, boot, chat, dropSchema, uniqueSchema, useTestDevnet } from "./harness.js";

const devnet = useTestDevnet();
const OPERATOR = "operator-token-for-cli-tests-0123456789abc";

async function cli(argv: string[], env: Record<string, string>) {
  let out = "";
  let err = "";
  const sink = (write: (s: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        write(String(chunk));
        done();
      },
    });
  const code = await operatorMain(argv, {
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
    env: { RATE_LIMIT_POINTS: "1000", ...env },
  });
  return { code, out, err };
}

const tokenIn = (out: string) => /^(x4c_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1] ?? "";

describe("over HTTP, against a running service", () => {
  let booted: Booted;
  let server: Awaited<ReturnType<typeof listen>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    booted = await boot(devnet, { store: "pglite", env: { OPERATOR_TOKEN: OPERATOR } });
    server = await listen(booted.running.service.app, { host: "127.0.0.1", port: 0 });
    env = { X402_CHAT_URL: server.url, OPERATOR_TOKEN: OPERATOR, DATA_DIR: "memory://" };
  });
  afterAll(async () => {
    if (server) await closeServer(server.server);
    await booted?.close();
  });

  it("keys create prints the token once; the key then pays a chat", async () => {
    const payer = walletAddress(devnet, "evm", "payer");
    const created = await cli(
      ["keys", "create", "--name", "cli-http", "--wallet", payer, "--daily", "3"],
      env,
    );
    expect(created).toMatchObject({ code: 0, err: "" });
    expect(created.out).toContain("it will not be shown again");
    const token = tokenIn(created.out);
    expect(token).not.toBe("");
    const result = await chat(booted.running, { token, wallet: payer });
    expect(result.finish.finishReason).toBe("payment-complete");

    const listed = await cli(["keys", "list"], env);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/^NAME\s+STATUS/);
    expect(listed.out).toMatch(/cli-http\s+active/);
    expect(listed.out).not.toContain(token);
  });

  it("pause --all and resume through the service; a wrong operator token is refused", async () => {
    const pausedOut = (await cli(["pause", "--all", "--reason", "from the cli"], env)).out;
    // Who paused: the CLI names its user (X-Operator), never a token.
    expect(pausedOut).toMatch(/^Paused: all payments since \S+ by cli:\S+: from the cli$/m);
    const paused = await chat(booted.running, {
      token: devnet.manifest.devToken,
      wallet: walletAddress(devnet, "evm", "payer"),
    });
    expect(paused.errors.map((e) => e.code)).toEqual(["payments_paused"]);
    expect((await cli(["resume", "--all"], env)).out).toBe("Payments are not paused.\n");

    const wrong = await cli(["keys", "list"], { ...env, OPERATOR_TOKEN: "x".repeat(40) });
    expect(wrong.code).toBe(3);
    expect(wrong.err).toContain("unauthorized");
  });

  it("revoke ends the key at once on this instance; rotate gives a new token", async () => {
    const token = tokenIn((await cli(["keys", "create", "--name", "cli-gone"], env)).out);
    const rotated = await cli(["keys", "rotate", "cli-gone"], env);
    const fresh = tokenIn(rotated.out);
    expect(fresh).not.toBe(token);
    expect((await chat(booted.running, { token: fresh })).status).toBe(200);
    expect((await cli(["keys", "revoke", "cli-gone"], env)).code).toBe(0);
    const response = await booted.running.service.app.request("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${fresh}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(401);
  });

  it("usage errors exit 2 and say what is missing", async () => {
    expect(await cli(["pause", "--all"], env)).toMatchObject({ code: 2 });
    expect((await cli(["resume"], env)).err).toContain("--all or --key NAME");
    expect((await cli(["keys", "create"], env)).err).toContain("name the key");
  });
});

describe("straight to the store", () => {
  it("the embedded store under DATA_DIR (no service running on it)", async () => {
    const dataDir = scratchDir("operator-cli");
    const env = { DATA_DIR: dataDir, PAYMENTS: "off" };
    const created = await cli(
      ["keys", "create", "--name", "local", "--scope", "chat", "--expires", "90m"],
      env,
    );
    expect(created.code).toBe(0);
    expect((await cli(["pause", "--key", "local", "--reason", "test"], env)).out).toContain("key local");
    const store = await openStore({ dataDir: `${dataDir}/pglite` });
    try {
      const [key] = await store.operator.listKeys();
      expect(key).toMatchObject({ name: "local", scopes: ["chat"], revokedAt: null });
      expect(await store.operator.listPauses()).toMatchObject([
        { scope: "key", key: "local", reason: "test" },
      ]);
      // While a process holds the store (a service would), the CLI does not open it beside it.
      const refused = await cli(["keys", "list"], env);
      expect(refused.code).toBe(3);
      expect(refused.err).toContain(`in use by process ${process.pid}`);
      expect(refused.err).toContain("X402_CHAT_URL");
      expect(refused.err).toContain("(store_in_use)");
    } finally {
      await store.close();
    }
  }, 60_000);

  describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL (DATABASE_URL, DATABASE_SCHEMA)", () => {
    const schema = uniqueSchema("opcli");
    let booted: Booted;
    beforeAll(async () => {
      booted = await boot(devnet, { store: "postgres", schema });
    });
    afterAll(async () => {
      await booted?.close();
      await dropSchema(schema);
    });

    it("keys and pauses written by the CLI hold in the service after its refresh", async () => {
      const env = {
        DATABASE_URL: process.env.DATABASE_URL ?? "",
        DATABASE_SCHEMA: schema,
        DATA_DIR: scratchDir("operator-cli-pg"),
        PAYMENTS: "off",
      };
      const payer = walletAddress(devnet, "evm", "payer");
      const token = tokenIn((await cli(["keys", "create", "--name", "pg-key", "--wallet", payer], env)).out);
      expect((await cli(["pause", "--all", "--reason", "pg"], env)).code).toBe(0);
      // Once the pause has answered, the service holds it by its own timed refresh: no read forced
      // here (found by a black-box run: 2 payments settled right after the CLI said "Paused").
      const refused = await chat(booted.running, { token, wallet: payer });
      expect(refused.status).toBe(200);
      expect(refused.errors.map((e) => e.code)).toEqual(["payments_paused"]);
      expect((await cli(["resume", "--all"], env)).code).toBe(0);
      expect((await cli(["keys", "revoke", "pg-key"], env)).code).toBe(0);
      await booted.running.operator?.cache.refresh();
      const gone = await booted.running.service.app.request("/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      expect(gone.status).toBe(401);
    });
  });
});
