import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./index.js";

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
