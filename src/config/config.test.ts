import { describe, expect, it } from "vitest";
import { approvalUrl, ConfigError, loadConfig } from "./index.js";

describe("SIGNERS_FILE and the payment mode", () => {
  it("is refused at start with PAYMENTS=devnet (explicit or the default), naming the variable", () => {
    for (const env of [
      { SIGNERS_FILE: "signers.json" },
      { PAYMENTS: "devnet", SIGNERS_FILE: "signers.json" },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/SIGNERS_FILE: is used only with PAYMENTS=external/);
    }
  });

  it("is taken with PAYMENTS=external", () => {
    expect(loadConfig({ PAYMENTS: "external", SIGNERS_FILE: "signers.json" }).payments.signersFile).toBe(
      "signers.json",
    );
  });
});

describe("CORS_ORIGINS", () => {
  it("is empty by default: only same-origin pages may call the API", () => {
    expect(loadConfig({}).cors.origins).toEqual([]);
  });

  it("takes exact origins separated by commas", () => {
    expect(
      loadConfig({ CORS_ORIGINS: " https://app.example.com , http://localhost:5173" }).cors.origins,
    ).toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it("refuses a wildcard, a path, a trailing slash or another scheme, naming the variable", () => {
    for (const bad of [
      "*",
      "https://app.example.com/",
      "https://app.example.com/chat",
      "app.example.com",
      "ftp://x.example",
      "null",
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS: expected origins/);
    }
  });
});

// Found by a black-box run: a path widened silently to the whole origin; `any,https://a` was `any`.
describe("ALLOWED_SERVICES and ALLOW_PRIVATE_ORIGINS", () => {
  const allowed = (value?: string) => loadConfig({ ALLOWED_SERVICES: value }).payments.limits.allowedServices;

  it("ALLOWED_SERVICES is any by default, or the origins listed, as a request's allowedServices reads them", () => {
    expect(allowed(undefined)).toBe("any");
    expect(allowed("any")).toBe("any");
    expect(allowed("https://Weather.example.com/, http://127.0.0.1:4021")).toEqual([
      "https://weather.example.com",
      "http://127.0.0.1:4021",
    ]);
  });

  it.each([
    ["ALLOWED_SERVICES", "http://127.0.0.1:3181/svc"],
    ["ALLOWED_SERVICES", "weather.example.com"],
    ["ALLOWED_SERVICES", "*"],
    ["ALLOWED_SERVICES", "https://weather.example.com?x=1"],
    ["ALLOWED_SERVICES", "https://user:pw@weather.example.com"],
    ["ALLOWED_SERVICES", "ftp://weather.example.com"],
    ["ALLOW_PRIVATE_ORIGINS", "http://127.0.0.1:3181/svc"],
    ["ALLOW_PRIVATE_ORIGINS", "127.0.0.1:3181"],
  ])("%s=%s is refused at start, naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: expected origins`));
  });

  it("ALLOWED_SERVICES refuses any beside origins: it would allow every service", () => {
    expect(() => allowed("any,https://a.example.com")).toThrow(
      /ALLOWED_SERVICES: `any` allows every service/,
    );
  });

  it("ALLOW_PRIVATE_ORIGINS takes origins", () => {
    expect(
      loadConfig({ ALLOW_PRIVATE_ORIGINS: "http://127.0.0.1:3181/" }).payments.allowPrivateOrigins,
    ).toEqual(["http://127.0.0.1:3181"]);
  });
});

describe("QUOTE_SECRET", () => {
  it("is absent by default (a random key per process) and taken when set", () => {
    expect(loadConfig({}).payments.quoteSecret).toBeUndefined();
    const secret = "q".repeat(32);
    expect(loadConfig({ QUOTE_SECRET: secret }).payments.quoteSecret).toBe(secret);
  });

  it("refuses a short one, naming the variable and not echoing it", () => {
    const attempt = () => loadConfig({ QUOTE_SECRET: "short-secret-value" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/QUOTE_SECRET: at least 32 characters/);
    expect(attempt).not.toThrow(/short-secret-value/);
  });
});

describe("AUTH_TOKENS", () => {
  it("keeps a token whole, '=' and all (base64 padding), and refuses a jwt: name", () => {
    const token = "YWxpY2UtdG9rZW4tYmFzZTY0=";
    expect([
      ...loadConfig({ AUTH_TOKENS: `alice=${token},bob=${"b".repeat(8)}=${"c".repeat(8)}` }).auth.tokens,
    ]).toEqual([
      [token, "alice"],
      [`${"b".repeat(8)}=${"c".repeat(8)}`, "bob"],
    ]);
    expect(() => loadConfig({ AUTH_TOKENS: `jwt:bob=${"t".repeat(16)}` })).toThrow(/may not start with jwt:/);
  });
});

describe("OPERATOR_TOKEN and METRICS_TOKEN", () => {
  const chat = "c".repeat(32);
  it("are refused at start when an AUTH_TOKENS token is the same, naming the variable, not the token", () => {
    for (const name of ["OPERATOR_TOKEN", "METRICS_TOKEN"]) {
      const attempt = () => loadConfig({ AUTH_TOKENS: `alice=${chat}`, [name]: chat });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(new RegExp(`${name}: must differ from every AUTH_TOKENS token`));
      expect(attempt).not.toThrow(new RegExp(chat));
    }
    const same = "o".repeat(32);
    expect(() => loadConfig({ OPERATOR_TOKEN: same, METRICS_TOKEN: same })).toThrow(
      /METRICS_TOKEN: must differ/,
    );
    expect(loadConfig({ AUTH_TOKENS: `alice=${chat}`, OPERATOR_TOKEN: same }).operatorToken).toBe(same);
  });
});

describe("PUBLIC_URL", () => {
  it("defaults to the listen address (a wildcard host as 127.0.0.1)", () => {
    expect(loadConfig({}).publicUrl).toBe("http://127.0.0.1:3000");
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "8080" }).publicUrl).toBe("http://127.0.0.1:8080");
    expect(loadConfig({ HOST: "pay.internal", PORT: "80" }).publicUrl).toBe("http://pay.internal:80");
  });

  it("takes an exact origin, and approval URLs are built on it", () => {
    const { publicUrl } = loadConfig({ PUBLIC_URL: "https://Pay.Example.com" });
    expect(publicUrl).toBe("https://pay.example.com");
    expect(approvalUrl(publicUrl, "pay_0b0e2e8c-5b7e-4a53-9d2f-6a7a1f0c9d11")).toBe(
      "https://pay.example.com/approve/pay_0b0e2e8c-5b7e-4a53-9d2f-6a7a1f0c9d11",
    );
  });

  it("refuses a path, a wildcard or another scheme, naming the variable", () => {
    for (const bad of [
      "https://pay.example.com/",
      "https://pay.example.com/app",
      "ftp://pay.example.com",
      "*",
    ]) {
      expect(() => loadConfig({ PUBLIC_URL: bad })).toThrow(/PUBLIC_URL: expected/);
    }
  });
});

// Found by a review: `PORT=` (compose's `${PORT}` unset) read as 0, a blank grace as none, hex as a number.
describe("numbers and blanks", () => {
  it("reads a variable set to nothing as unset (its default), and only decimal whole numbers", () => {
    const config = loadConfig({
      PORT: "",
      SHUTDOWN_GRACE_MS: " ",
      PAYMENTS: "off",
      REQUEST_TIMEOUT_MS: " 60000 ",
    });
    expect(config.port).toBe(3000);
    expect(config.shutdownGraceMs).toBe(10_000);
    expect(config.requestTimeoutMs).toBe(60_000);
    for (const bad of ["0x10", "1e3", "12.5", "-1", "ten"])
      expect(() => loadConfig({ PAYMENTS: "off", HEARTBEAT_MS: bad }), bad).toThrow(
        /HEARTBEAT_MS: must be a whole number/,
      );
  });
});
