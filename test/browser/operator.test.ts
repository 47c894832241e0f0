/**
 * The operator page's client and pure parts (web/src/operator/api.ts, model.ts): every route called
 * as the operator API's contract says (docs/deploy.md#operating-it) with the token as a bearer
 * header, a refusal turned into its problem's sentence, the create-key form read into the API's
 * body, ages and caps in words, and the token kept in sessionStorage only. The page itself is
 * tested in Chromium against the real API (operator-page.test.ts).
 */
import { describe, expect, it } from "vitest";
import { type KeyView, OperatorApi, OperatorApiError } from "../../web/src/operator/api.js";
import {
  age,
  createKeyBody,
  EMPTY_KEY_FORM,
  forgetSession,
  keepSession,
  limitsText,
  NAME_STORAGE_KEY,
  readSession,
  serverKeyFormErrors,
  splitPauses,
  TOKEN_STORAGE_KEY,
} from "../../web/src/operator/model.js";

const TOKEN = "op_".padEnd(40, "x");

const KEY: KeyView = {
  name: "alpha",
  scopes: ["chat"],
  wallets: null,
  limits: { perTransaction: "0.5", perRequest: null, daily: "10" },
  status: "active",
  createdAt: "2026-11-28T04:00:00.000Z",
  expiresAt: null,
  revokedAt: null,
  spentTodayUsd: "0.01",
};

interface Sent {
  url: string;
  method: string | undefined;
  headers: Record<string, string>;
  body: unknown;
}

/** An API over a fake fetch that records each request and answers `reply`. */
function apiAnswering(reply: () => Response) {
  const sent: Sent[] = [];
  const api = new OperatorApi(TOKEN, {
    base: "http://svc.test",
    fetchImpl: async (url, init) => {
      sent.push({
        url,
        method: init?.method,
        headers: init?.headers as Record<string, string>,
        body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
      });
      return reply();
    },
  });
  return { api, sent };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

describe("OperatorApi", () => {
  it("calls each route of the contract with the operator token as a bearer header", async () => {
    const { api, sent } = apiAnswering(() =>
      json({ keys: [KEY], key: KEY, token: "t", pauses: [], payments: [], refusals: [] }),
    );
    expect(await api.keys()).toEqual([KEY]);
    expect(await api.createKey({ name: "alpha", daily: "10", scopes: ["chat"] })).toMatchObject({
      key: KEY,
      token: "t",
    });
    expect(await api.revokeKey("a b/c")).toEqual(KEY);
    expect(await api.rotateKey("alpha")).toMatchObject({ key: KEY, token: "t" });
    await api.pauses();
    await api.pause({ all: true }, "incident 12");
    await api.resume({ key: "alpha" });
    await api.payments();
    await api.unclear();
    await api.refusals(20);
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
      "GET http://svc.test/api/operator/keys",
      "POST http://svc.test/api/operator/keys",
      "POST http://svc.test/api/operator/keys/a%20b%2Fc/revoke",
      "POST http://svc.test/api/operator/keys/alpha/rotate",
      "GET http://svc.test/api/operator/pauses",
      "POST http://svc.test/api/operator/pause",
      "POST http://svc.test/api/operator/resume",
      "GET http://svc.test/api/operator/payments?limit=50",
      "GET http://svc.test/api/operator/unclear",
      "GET http://svc.test/api/operator/refusals?limit=20",
    ]);
    expect(sent.every((s) => s.headers.Authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(sent[1]?.body).toEqual({ name: "alpha", daily: "10", scopes: ["chat"] });
    expect(sent[5]?.body).toEqual({ all: true, reason: "incident 12" });
    expect(sent[6]?.body).toEqual({ key: "alpha" });
    expect(sent[0]?.headers["Content-Type"]).toBeUndefined();
    expect(sent[1]?.headers["Content-Type"]).toBe("application/json");
    // The token goes in the header only, never in a URL.
    expect(sent.some((s) => s.url.includes(TOKEN))).toBe(false);
  });

  it("names the operator in X-Operator when the name is one the service takes, else not at all", async () => {
    const headersFor = async (operator: string | undefined) => {
      let sent: Record<string, string> = {};
      const api = new OperatorApi(TOKEN, {
        operator,
        fetchImpl: async (_url, init) => {
          sent = init?.headers as Record<string, string>;
          return json({ pauses: [] });
        },
      });
      await api.pauses();
      return sent;
    };
    expect((await headersFor("Ada L."))["X-Operator"]).toBe("Ada L.");
    expect(await headersFor("bad\nname")).not.toHaveProperty("X-Operator");
    expect(await headersFor("x".repeat(65))).not.toHaveProperty("X-Operator");
    expect(await headersFor(undefined)).not.toHaveProperty("X-Operator");
  });

  it("a refusal is its problem's detail as a sentence, with its code and status", async () => {
    const { api } = apiAnswering(() =>
      json({ code: "key_exists", title: "Conflict", detail: "A key named alpha exists already." }, 409),
    );
    const error = await api.createKey({ name: "alpha" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperatorApiError);
    expect(error).toMatchObject({
      message: "A key named alpha exists already.",
      status: 409,
      code: "key_exists",
    });
  });

  it("a refusal of bad input names each field the service named", async () => {
    const { api } = apiAnswering(() =>
      json(
        {
          code: "invalid_request",
          detail: "The request is invalid",
          errors: [
            { path: "wallets.0", message: "not a wallet address" },
            { path: "daily", message: "at most 6 decimals" },
          ],
        },
        400,
      ),
    );
    expect(await api.createKey({ name: "a" }).catch((e: Error) => e.message)).toBe(
      "The request is invalid. wallets.0: not a wallet address; daily: at most 6 decimals.",
    );
  });

  // Found by a black-box run: the operator read "(expiresIn: ...). expiresIn: ..." twice over.
  it("a field the detail already names is not said again", async () => {
    const { api } = apiAnswering(() =>
      json(
        {
          code: "invalid_request",
          detail: "The key is not valid (expiresIn: a duration such as 90m, 12h or 30d).",
          errors: [
            { path: "expiresIn", message: "a duration such as 90m, 12h or 30d" },
            { path: "name", message: "letters, digits, - and _" },
          ],
        },
        400,
      ),
    );
    expect(await api.createKey({ name: "a" }).catch((e: Error) => e.message)).toBe(
      "The key is not valid (expiresIn: a duration such as 90m, 12h or 30d). name: letters, digits, - and _.",
    );
  });

  it("without a detail: the title, else the status in words; an unreachable service says so", async () => {
    expect(
      await apiAnswering(() => json({ title: "Unauthorized" }, 401))
        .api.keys()
        .catch((e: Error) => e.message),
    ).toBe("Unauthorized");
    expect(
      await apiAnswering(() => new Response("<html>", { status: 502 }))
        .api.keys()
        .catch((e: Error) => e.message),
    ).toBe("The service answered HTTP 502.");
    const down = new OperatorApi(TOKEN, {
      fetchImpl: () => Promise.reject(new TypeError("Failed to fetch")),
    });
    expect(await down.pauses().catch((e: OperatorApiError) => [e.message, e.status])).toEqual([
      "The service cannot be reached.",
      0,
    ]);
  });
});

describe("createKeyBody", () => {
  it("sends only what was filled in: caps as USD strings, wallets split, expiry and scopes", () => {
    expect(
      createKeyBody({
        name: " ci-bot ",
        perTransaction: "$0.50",
        perRequest: "",
        daily: "10",
        wallets: "0xabc, 0xdef\n0x123",
        expiresIn: "30d",
        scopes: ["chat", "history"],
      }),
    ).toEqual({
      body: {
        name: "ci-bot",
        perTransaction: "0.50",
        daily: "10",
        wallets: ["0xabc", "0xdef", "0x123"],
        expiresIn: "30d",
        scopes: ["chat", "history"],
      },
    });
    expect(createKeyBody({ ...EMPTY_KEY_FORM, name: "a" })).toEqual({
      body: { name: "a", scopes: ["chat"] },
    });
  });

  it("names each field it cannot read, and sends nothing", () => {
    const read = createKeyBody({
      ...EMPTY_KEY_FORM,
      name: "  ",
      perTransaction: "0,50",
      daily: "1.1234567",
      expiresIn: "2 weeks",
      scopes: [],
    });
    expect(read).not.toHaveProperty("body");
    expect(Object.keys("errors" in read ? read.errors : {}).sort()).toEqual([
      "daily",
      "expiresIn",
      "name",
      "perTransaction",
      "scopes",
    ]);
  });
});

describe("serverKeyFormErrors", () => {
  it("puts the service's refusal beside the fields it names, and a taken name beside the name", async () => {
    const { api } = apiAnswering(() =>
      json(
        {
          code: "invalid_request",
          detail: "The request is invalid",
          errors: [
            { path: "wallets.1", message: "not a wallet address" },
            { path: "daily", message: "at most 6 decimals" },
            { path: "colour", message: "not a field of a key" },
          ],
        },
        400,
      ),
    );
    const refused = await api.createKey({ name: "a" }).catch((e: unknown) => e);
    expect(serverKeyFormErrors(refused)).toEqual({
      wallets: "wallets.1: not a wallet address",
      daily: "at most 6 decimals",
    });
    const taken = new OperatorApiError("A key named ci exists.", 409, "key_exists");
    expect(serverKeyFormErrors(taken)).toEqual({ name: expect.stringMatching(/exists already/) });
    expect(serverKeyFormErrors(new Error("network down"))).toEqual({});
  });
});

describe("words on the page", () => {
  const at = Date.parse("2026-11-28T04:00:00Z");
  it("ages: seconds, minutes, hours and minutes, days and hours; never negative", () => {
    const iso = "2026-11-28T04:00:00Z";
    expect(age(iso, at + 40_000)).toBe("40 s");
    expect(age(iso, at + 12 * 60_000 + 5_000)).toBe("12 min");
    expect(age(iso, at + 3 * 3_600_000 + 5 * 60_000)).toBe("3 h 5 min");
    expect(age(iso, at + 3 * 3_600_000)).toBe("3 h");
    expect(age(iso, at + 50 * 3_600_000)).toBe("2 d 2 h");
    expect(age(iso, at - 5_000)).toBe("0 s");
    expect(age("not a time", at)).toBe("");
  });

  it("a key's caps as dollars, or the service's own when it has none", () => {
    expect(limitsText(KEY.limits)).toBe("$0.50 a payment, $10.00 a day");
    expect(limitsText({ perTransaction: null, perRequest: "2", daily: null })).toBe("$2.00 a request");
    expect(limitsText({ perTransaction: null, perRequest: null, daily: null })).toBe("the service's own");
  });

  it("the pause of everything apart from the keys paused one by one", () => {
    const all = { scope: "all" as const, reason: "r", since: "s", by: "operator" };
    const key = { scope: "key" as const, key: "alpha", reason: "r", since: "s", by: "operator" };
    expect(splitPauses([key, all])).toEqual({ all, keys: [key] });
    expect(splitPauses([])).toEqual({ all: undefined, keys: [] });
  });
});

describe("the operator token's storage", () => {
  it("keeps the token and the name under their keys, reads them back, forgets both on sign-out", () => {
    const map = new Map<string, string>();
    const storage = {
      getItem: (k: string) => map.get(k) ?? null,
      setItem: (k: string, v: string) => void map.set(k, v),
      removeItem: (k: string) => void map.delete(k),
    };
    expect(readSession(storage)).toBeUndefined();
    keepSession(storage, { token: TOKEN, name: "Ada" });
    expect(map.get(TOKEN_STORAGE_KEY)).toBe(TOKEN);
    expect(map.get(NAME_STORAGE_KEY)).toBe("Ada");
    expect(readSession(storage)).toEqual({ token: TOKEN, name: "Ada" });
    keepSession(storage, { token: TOKEN });
    expect(readSession(storage)).toEqual({ token: TOKEN });
    forgetSession(storage);
    expect(map.size).toBe(0);
  });

  it("a storage that refuses is not an error: nothing is kept", () => {
    const refuse = () => {
      throw new Error("SecurityError");
    };
    const refusing = { getItem: refuse, setItem: refuse, removeItem: refuse };
    expect(readSession(refusing)).toBeUndefined();
    expect(() => keepSession(refusing, { token: TOKEN })).not.toThrow();
    expect(() => forgetSession(refusing)).not.toThrow();
  });
});
