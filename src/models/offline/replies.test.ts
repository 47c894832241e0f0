import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../../tools/contract.js";
import { toolErrorReply, unreadableReply } from "./replies.js";

describe("failure replies claim only what is known", () => {
  it("never says nothing was paid when the pay step failed (its outcome is on the p: lines)", () => {
    for (const text of [toolErrorReply(TOOL_NAMES.pay, "internal"), unreadableReply(TOOL_NAMES.pay)]) {
      expect(text).not.toMatch(/nothing was paid/i);
      expect(text).toMatch(/payment updates/);
    }
  });

  it("says nothing was paid when a step that cannot spend failed", () => {
    expect(toolErrorReply(TOOL_NAMES.budget, "store down")).toMatch(/Nothing was paid/);
    expect(unreadableReply(TOOL_NAMES.quote)).toMatch(/Nothing was paid/);
  });
});
