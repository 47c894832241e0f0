/**
 * Refusal bodies carry what docs/protocol.md promises. This test
 * reads the documented codes from docs/protocol.md's tables, checks them against the one code table
 * (src/errors), then provokes each code it can for real on the devnet and checks every documented
 * field: present, with its type, and every `limit_exceeded` naming a documented limit.
 * Not provoked here (covered elsewhere, or not cheaply): payment_failed (test/payments/approval*),
 * deadline_exceeded (test/deadline.test.ts), model_error, shutting_down, store_unavailable
 * (test/store-outage.test.ts), internal; payment_unclear has its own test (unclear.test.ts).
 */
import { readFileSync } from "node:fs";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { ERROR_CODES, type ErrorCode } from "../../src/errors/index.js";
import {
  awaiting,
  type Booted,
  boot,
  type ChatResult,
  chat,
  chatRequest,
  dropSchema,
  payCall,
  problem,
  ScriptedModels,
  signTypedDataOf,
  useTestDevnet,
  WEATHER_PARIS,
} from "./harness.js";

const DOC = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");

/** The rows of the markdown table that follows `heading` (cells trimmed, header and rule dropped). */
function tableAfter(heading: string): string[][] {
  const start = DOC.indexOf(heading);
  if (start < 0) throw new Error(`no "${heading}" in docs/protocol.md`);
  const lines = DOC.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((c) => c.trim().replace(/^\| ?| ?\|$/g, "")),
    );
  }
  return rows.slice(2);
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/** The limits a request can set (the `spendingLimits` table), the names `limit` may take. */
const LIMIT_NAMES: string[] = tableAfter("### `spendingLimits`")
  .map((cells) => ticked(cells[0] ?? "")[0] ?? "")
  .filter((name) => name !== "approvalAbove");

interface StreamRow {
  code: ErrorCode;
  finishReason: string;
  required: string[];
  optional: string[];
}

/** The `e:` table: code, finish reason, details (a name ending in `?` is conditional). */
const STREAM_CODES: StreamRow[] = tableAfter("The codes that occur inside a stream").map((cells) => {
  const [code, finish, details] = [ticked(cells[0] ?? "")[0], ticked(cells[1] ?? "")[0], cells[2] ?? ""];
  const names = ticked(details).filter((n) => /^[a-zA-Z]+\??$/.test(n) && !LIMIT_NAMES.includes(n));
  return {
    code: code as ErrorCode,
    finishReason: finish ?? "",
    required: names.filter((n) => !n.endsWith("?")),
    optional: names.filter((n) => n.endsWith("?")).map((n) => n.slice(0, -1)),
  };
});

/** Status and code of the tables of refusals before the stream (errors, approval checks). */
const PROBLEM_ROWS = [
  ...tableAfter("| Status    | `code`"),
  ...tableAfter("Before the stream opens the service checks"),
].flatMap((cells) => {
  const statuses = (cells[0] ?? "").split("/").map((s) => Number(s.trim()));
  return ticked(cells[1] ?? "").map((code, i) => ({
    code,
    status: statuses[i] ?? statuses[0],
    when: cells[2] ?? "",
  }));
});

const AMOUNT = /^[0-9]+(\.[0-9]+)?$/;

/** Each documented field has the type its name promises. */
function expectField(body: Record<string, unknown>, name: string): void {
  const value = body[name];
  expect(value, `${String(body.code)}.${name}`).toBeDefined();
  if (name.endsWith("Usd")) expect(value).toMatch(AMOUNT);
  else if (name === "paymentId") expect(value).toMatch(/^pay_[0-9a-f-]{36}$/);
  else if (name === "limit") expect(LIMIT_NAMES).toContain(value);
  else if (/Status$|Ms$/.test(name) && name !== "paymentStatus") expect(typeof value).toBe("number");
  else if (name === "offers") expect(Array.isArray(value)).toBe(true);
  else expect(typeof value).toBe("string");
}

/** Every documented field the code always carries, and those of its case it does. */
function expectDocumented(body: Record<string, unknown>, present: string[] = []): void {
  const row = STREAM_CODES.find((r) => r.code === body.code);
  expect(row, `${String(body.code)} is in the e: table`).toBeDefined();
  for (const name of [...(row?.required ?? []), ...present]) expectField(body, name);
  for (const name of row?.optional ?? []) if (name in body) expectField(body, name);
  if (
    body.code === "limit_exceeded" &&
    ["perTransaction", "perRequest", "daily"].includes(String(body.limit))
  ) {
    for (const name of ["limitUsd", "remainingUsd", "priceUsd"]) expectField(body, name);
  }
}

describe("the documented codes are the code table's", () => {
  it("reads the tables", () => {
    expect(STREAM_CODES.length).toBeGreaterThan(8);
    expect(LIMIT_NAMES).toEqual([
      "perTransaction",
      "perRequest",
      "daily",
      "allowedNetworks",
      "allowedServices",
    ]);
    expect(PROBLEM_ROWS.length).toBeGreaterThan(20);
  });

  it("every e: code has its documented finish reason", () => {
    for (const row of STREAM_CODES) {
      expect(Object.hasOwn(ERROR_CODES, row.code), row.code).toBe(true);
      expect([row.code, ERROR_CODES[row.code].finishReason]).toEqual([row.code, row.finishReason]);
    }
  });

  it("every code refused before the stream has its documented HTTP status", () => {
    for (const row of PROBLEM_ROWS) {
      expect(Object.hasOwn(ERROR_CODES, row.code), row.code).toBe(true);
      expect([row.code, ERROR_CODES[row.code as ErrorCode].status]).toEqual([row.code, row.status]);
    }
  });

  it("every code of the code table is documented", () => {
    for (const code of Object.keys(ERROR_CODES)) expect(DOC, code).toContain(`\`${code}\``);
  });
});

const devnet = useTestDevnet();
const models = new ScriptedModels();
let booted: Booted;

beforeAll(async () => {
  // A shorter service timeout, so a settlement that never answers (service_undelivered) is given up on sooner.
  booted = await boot(devnet, {
    store: "pglite",
    models: models.registry,
    env: { SERVICE_TIMEOUT_MS: "3000" },
  });
}, 180_000);
afterAll(async () => {
  await booted?.close();
  await dropSchema(booted?.schema);
});

describe("each code provoked carries its documented fields", () => {
  const payer = () => walletAddress(devnet, "evm", "payer");
  const token = () => devnet.manifest.devToken;
  const weather = () => models.script("problems-weather", [[payCall(devnet)]]);
  const lastError = (result: ChatResult) => {
    const error = result.errors.at(-1) as Record<string, unknown> | undefined;
    if (!error) throw new Error(`no e: line: ${result.raw.slice(0, 500)}`);
    return error;
  };

  it.each([
    ["perTransaction", { perTransaction: "0.005" }],
    ["perRequest", { perRequest: "0.005" }],
    ["daily", { daily: "0.005" }],
    ["allowedNetworks", { allowedNetworks: ["eip155:1"] }],
    ["allowedServices", { allowedServices: ["https://example.com"] }],
  ] as const)("limit_exceeded names its limit: %s", async (limit, spendingLimits) => {
    const result = await chat(booted.running, {
      wallet: payer(),
      token: token(),
      spendingLimits,
      message: weather(),
    });
    const error = lastError(result);
    expect(error).toMatchObject({ code: "limit_exceeded", limit });
    expectDocumented(error);
    expect(result.finish.finishReason).toBe(ERROR_CODES.limit_exceeded.finishReason);
  });

  it("insufficient_balance", async () => {
    const result = await chat(booted.running, {
      wallet: walletAddress(devnet, "evm", "payer-low"),
      token: token(),
    });
    expectDocumented(lastError(result));
  });

  it("service_unavailable (a 503: with httpStatus)", async () => {
    await devnet.faults.set({ serviceDown: "503" });
    const result = await chat(booted.running, { wallet: payer(), token: token(), message: weather() });
    const error = lastError(result);
    expect(error.code).toBe("service_unavailable");
    expectDocumented(error, ["httpStatus"]);
  });

  it("service_refused (the service answers the call's input with a 400: nothing paid, never a 5xx)", async () => {
    // The devnet's services refuse a field longer than 200 characters before asking for money.
    const message = models.script("problems-refused", [
      [payCall(devnet, "weather", { query: { city: "x".repeat(201) } })],
    ]);
    const result = await chat(booted.running, { wallet: payer(), token: token(), message });
    const error = lastError(result);
    // What the service said of the call, so it can be mended (its own words, bounded).
    expect(error).toMatchObject({
      code: "service_refused",
      httpStatus: 400,
      serviceSaid: expect.stringMatching(/city/),
    });
    expect(error.message).toContain(`saying: ${JSON.stringify(error.serviceSaid)}`);
    expectDocumented(error);
    expect(result.finish.finishReason).toBe("error");
    expect(result.payments).toEqual([]);
    // As one JSON answer, its status is the code's (422): the call was at fault, not the server.
    const json = await booted.running.service.app.request(
      "/api/chat",
      chatRequest(
        { messages: [{ role: "user", content: message }], walletAddress: payer() },
        { Authorization: `Bearer ${token()}`, Accept: "application/json" },
      ),
    );
    expect(json.status).toBe(422);
    expect((await json.json()).errors).toMatchObject([{ code: "service_refused", httpStatus: 400 }]);
  });

  it("price_changed", async () => {
    await devnet.faults.set({ requoteMultiplier: 50 });
    const result = await chat(booted.running, { wallet: payer(), token: token() });
    const error = lastError(result);
    expect(error.code).toBe("price_changed");
    expectDocumented(error);
  });

  it("payment_unavailable (no wallet)", async () => {
    const result = await chat(booted.running, { message: weather() });
    expect(lastError(result).code).toBe("payment_unavailable");
    expectDocumented(lastError(result));
  });

  it("payment_unclear (the settlement refused after sending: the row is unknown)", async () => {
    await devnet.faults.set({ settleFail: true });
    const result = await chat(booted.running, { wallet: payer(), token: token() });
    const error = lastError(result);
    expect(error.code).toBe("payment_unclear");
    expectDocumented(error);
    expect(error.message).toContain(String(error.paymentId));
  });

  it("service_undelivered (settled, the service never answered): 424 in JSON mode, not a 5xx a client retries", async () => {
    // The facilitator settles on chain and never answers: the service never gives its answer.
    await devnet.faults.set({ settleHangAfterChain: true });
    const json = await booted.running.service.app.request(
      "/api/chat",
      chatRequest(
        { messages: [{ role: "user", content: weather() }], walletAddress: payer() },
        { Authorization: `Bearer ${token()}`, Accept: "application/json" },
      ),
    );
    const body = (await json.json()) as {
      errors: Array<Record<string, unknown>>;
      payments: Array<{ status: string; transaction?: string }>;
      finish: { finishReason: string };
    };
    const error = body.errors.at(-1) ?? {};
    expect([json.status, error.code]).toEqual([424, "service_undelivered"]);
    expectDocumented(error);
    expect(error.transaction).toBe(body.payments.at(-1)?.transaction);
    expect(body.payments.at(-1)?.status).toBe("settled");
    expect(body.finish.finishReason).toBe("service-unavailable");
  });

  describe("refusals of an approval, before the stream", () => {
    const user = () => walletAddress(devnet, "evm", "user");
    const resume = (approval: Record<string, unknown>, spendingLimits?: Record<string, unknown>) =>
      booted.running.service.app.request(
        "/api/chat",
        chatRequest({
          messages: [{ role: "user", content: WEATHER_PARIS }],
          walletAddress: user(),
          ...(spendingLimits ? { spendingLimits } : {}),
          approval,
        }),
      );
    const ask = async () => awaiting(await chat(booted.running, { wallet: user() }));
    const sign = async (asked: Awaited<ReturnType<typeof ask>>) =>
      signTypedDataOf(asked, privateKeyToAccount(devnet.secrets.evm.user as `0x${string}`));

    it("approval_used names the payment's state in paymentStatus; status stays the HTTP status", async () => {
      const asked = await ask();
      await (await resume({ paymentId: asked.paymentId, reject: true })).text();
      const body = await problem(await resume({ paymentId: asked.paymentId, signature: await sign(asked) }));
      expect(body).toMatchObject({ status: 400, code: "approval_used", paymentStatus: "rejected" });
      expect(body.paymentId).toBe(asked.paymentId);
    });

    it.each([
      ["daily", { daily: "0.005" }],
      ["allowedNetworks", { allowedNetworks: ["eip155:1"] }],
      ["allowedServices", { allowedServices: ["https://example.com"] }],
    ] as const)("a 403 limit_exceeded names its limit: %s", async (limit, spendingLimits) => {
      const asked = await ask();
      const body = await problem(
        await resume({ paymentId: asked.paymentId, signature: await sign(asked) }, spendingLimits),
      );
      expect(body).toMatchObject({ status: 403, code: "limit_exceeded", limit, paymentId: asked.paymentId });
      expectDocumented(body as Record<string, unknown>);
      await (await resume({ paymentId: asked.paymentId, reject: true })).text();
    });
  });
});
