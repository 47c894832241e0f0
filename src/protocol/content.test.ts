import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanText, cleanUntrusted, NESTED_TOO_DEEP, textCleaner, unsafeContentReason } from "./content.js";

const unsafeChar = fc.constantFrom(
  "\u0000",
  "\u001B",
  "\u007F",
  "\u200F",
  "\u202E",
  "\u2067",
  "\u{E0041}",
  "\u{E007F}",
  "\u200B",
  "\u2060",
  "\uFEFF",
  "\u200D",
  "\u200C",
  "\uFE0F",
  "\uFE00",
  "\u{E0101}",
);
const mixed = fc.array(fc.oneof(fc.string(), unsafeChar)).map((parts) => parts.join(""));

describe("the content rule for text from outside", () => {
  it("leaves nothing a client message would be refused for, and counts what it removed", () => {
    fc.assert(
      fc.property(mixed, (text) => {
        const { text: clean, removed } = cleanText(text);
        expect(unsafeContentReason(clean)).toBeUndefined();
        if (removed === 0) expect(clean).toBe(text);
        else expect(clean).not.toBe(text);
      }),
    );
  });

  it("keeps emoji and scripts' single joiners and selectors, and takes out runs that smuggle bytes", () => {
    const honest = ["❤\uFE0F", "👨\u200D👩\u200D👧", "🏳\uFE0F\u200D🌈", "می\u200Cخواهم", "葛\u{E0100}"];
    for (const text of honest) expect(cleanText(text)).toEqual({ text, removed: 0 });
    // "hi" hidden as variation selectors after one visible letter, as the smuggling trick does.
    const smuggled = `a${"\uFE00\uFE0F\u{E0100}\u{E01EF}"}b\u200Bc\u200C\u200Dd`;
    expect(cleanText(smuggled)).toEqual({ text: "abcd", removed: 7 });
    expect(unsafeContentReason("a\uFE01\uFE02")).toMatch(/run of invisible characters/);
    expect(unsafeContentReason("a\u200Bb")).toMatch(/U\+200B/);
    // Taking out a control character must not leave a run behind.
    expect(cleanText("\uFE0F\u0000\uFE0F")).toEqual({ text: "", removed: 3 });
  });

  it("cleans streamed pieces as one text: no run is left across them, however the text is cut", () => {
    const selectors = fc.array(fc.constantFrom("a", "\u{E0100}", "\u{E01EF}", "\uFE0F", "\u200D"), {
      maxLength: 12,
    });
    const text = fc.oneof(
      mixed,
      selectors.map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (whole, cuts) => {
        // Cut anywhere, inside a surrogate pair too, as a provider's pieces might be.
        const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...at].map((start, i) => whole.slice(start, [...at, whole.length][i]));
        const clean = textCleaner();
        const out = pieces.map(clean).join("");
        if (whole.isWellFormed()) expect(unsafeContentReason(out)).toBeUndefined();
        else expect(unsafeContentReason(out.toWellFormed())).toBeUndefined();
      }),
    );
  });

  it("leaves safe text unchanged", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(unsafeContentReason(text) === undefined);
        expect(cleanText(text)).toEqual({ text, removed: 0 });
      }),
    );
  });

  it("cleans keys and values at any depth and keeps a __proto__ key a plain key", () => {
    const input = JSON.parse('{"a\\u202e":["x\\udb40\\udc41y",{"__proto__":"p\\u2066"}],"n":1,"b":null}');
    const { value, removed } = cleanUntrusted(input);
    expect(value).toEqual({ a: ["xy", Object.fromEntries([["__proto__", "p"]])], n: 1, b: null });
    expect(Object.getPrototypeOf((value as { a: unknown[] }).a[1])).toBe(Object.prototype);
    expect(removed).toBe(3);
  });

  it("cuts a value nested past 200 levels instead of overflowing the stack (a hostile answer)", () => {
    const deep = JSON.parse(`${"[".repeat(50_000)}"x"${"]".repeat(50_000)}`);
    const { value } = cleanUntrusted({ data: deep });
    let level: unknown = (value as { data: unknown }).data;
    let depth = 1;
    while (Array.isArray(level)) {
      level = level[0];
      depth += 1;
    }
    expect(level).toBe(NESTED_TOO_DEEP);
    expect(depth).toBe(200);
    // Shallow values are untouched.
    expect(cleanUntrusted([[["ok"]]]).value).toEqual([[["ok"]]]);
  });

  it("replaces lone surrogates and counts them", () => {
    expect(cleanText("a\uD800b")).toEqual({ text: "a\uFFFDb", removed: 1 });
  });
});
