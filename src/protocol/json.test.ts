import { describe, expect, it } from "vitest";
import { nestsAtMost, parseJsonAmountsAsWritten, sortedKeys } from "./json.js";

describe("request bodies' JSON", () => {
  it("keeps an amount sent as a number as it was written, however its key is spelled", () => {
    expect(parseJsonAmountsAsWritten('{"daily":1e3,"perTransaction":-0,"amount":0.50}')).toEqual({
      daily: "1e3",
      perTransaction: "-0",
      amount: "0.50",
    });
    // An escaped key is the same key once parsed: it gets the same rule.
    expect(parseJsonAmountsAsWritten('{"dail\\u0079": 1e3}')).toEqual({ daily: "1e3" });
    // Other numbers stay numbers.
    expect(parseJsonAmountsAsWritten('{"temperature":1e-1,"maxTokens":4000}')).toEqual({
      temperature: 0.1,
      maxTokens: 4000,
    });
  });

  it("parses a body with no amount as JSON.parse does, deep nesting included", () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    expect(() => parseJsonAmountsAsWritten(deep)).not.toThrow();
  });

  it("sorts keys at every depth, and measures depth without recursion", () => {
    expect(JSON.stringify(sortedKeys({ b: 1, a: { d: [{ f: 1, e: 2 }], c: 3 } }))).toBe(
      '{"a":{"c":3,"d":[{"e":2,"f":1}]},"b":1}',
    );
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nestsAtMost(deep, 32)).toBe(false);
    expect(nestsAtMost({ a: { b: [1] } }, 3)).toBe(true);
    expect(nestsAtMost({ a: { b: [1] } }, 2)).toBe(false);
  });
});
