import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { USAGE, USAGE_ALL } from "../src/cli/usage.js";
import { LIMITS_RULE } from "../src/protocol/limits-rule.js";

/**
 * The one rule for how limits combine (docs/payments.md#spending-limits) says the same, word for
 * word, wherever a user reads it: docs/protocol.md, docs/payments.md, the terminal chat's help (both
 * of them) and the web page's Settings, which renders the constant itself.
 */

const root = new URL("../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
/** Text as a reader sees it: line breaks, indentation and Markdown quoting are not words. */
const words = (text: string) => text.replace(/\n\s*>?\s*/g, " ").replace(/\s+/g, " ");

describe("the limits rule", () => {
  it.each([
    ["docs/protocol.md", () => read("docs/protocol.md")],
    ["docs/payments.md", () => read("docs/payments.md")],
    ["docs/clients.md", () => read("docs/clients.md")],
    ["the chat's --help", () => USAGE],
    ["the chat's --help all", () => USAGE_ALL],
  ])("is stated word for word in %s", (_where, text) => {
    expect(words(text())).toContain(LIMITS_RULE);
  });

  it("is what the web page's Settings show", () => {
    const panel = read("web/src/components/SettingsPanel.tsx");
    expect(panel).toContain("{LIMITS_RULE}");
    expect(panel).not.toMatch(/only tighten/);
  });

  it("no surface still says a request's limits only tighten the server's", () => {
    for (const path of [
      "docs/protocol.md",
      "docs/payments.md",
      "docs/clients.md",
      "docs/mcp.md",
      "README.md",
    ]) {
      expect(words(read(path))).not.toMatch(/limits (can )?only (tighten|narrow)/);
    }
    expect(words(USAGE_ALL)).not.toMatch(/only tighten/);
  });
});
