import { describe, expect, it } from "vitest";
import { parseCloseTab, parseOpenTab, parseTabToken } from "./tab.js";
import type { WalletCheck } from "./wallet.js";

const WALLET = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";
const check: WalletCheck = (address) => ({ ok: true, wallet: { chain: "evm", address } });
const open = (seconds: unknown) => () =>
  parseOpenTab({ walletAddress: WALLET, amount: "0.05", seconds }, check);

describe("a tab's seconds on the wire", () => {
  // Found by a black-box re-test: past 30 days the wire's own bound answered, naming 2592000,
  // not the service's TAB_MAX_SECONDS that the tab's terms name (src/payments/tabs/terms.ts).
  it("are whole seconds from a minute up, the longest left to the service's terms", () => {
    expect(open(99_999_999)()).toMatchObject({ seconds: 99_999_999 });
    for (const bad of [59, 60.5, -1, 1e300, "3600"])
      expect(open(bad), String(bad)).toThrow(expect.objectContaining({ code: "tab_invalid" }));
  });

  it("say what an infinite one (JSON's 1e400) must be", () => {
    expect(open(Number.POSITIVE_INFINITY)).toThrow(
      expect.objectContaining({ fields: [{ path: "seconds", message: "must be a finite number" }] }),
    );
  });
});

// Found by a black-box run: every body refused unknown fields but the close's.
describe("a tab's close", () => {
  it("takes its token and nothing else", () => {
    const token = `x4t_${"Q".repeat(43)}`;
    expect(parseCloseTab({ token })).toBe(token);
    for (const body of [{ token, x: 1 }, {}, null, { token: 7 }])
      expect(() => parseCloseTab(body), JSON.stringify(body)).toThrow(
        expect.objectContaining({ code: "tab_invalid" }),
      );
  });
});

// Found by a black-box run: a missing X-Tab-Token header was said to be a problem of "(body)".
describe("the X-Tab-Token header", () => {
  it("is named when it is missing or not a token", () => {
    for (const header of [undefined, "nope"])
      expect(() => parseTabToken(header)).toThrow(
        expect.objectContaining({
          code: "tab_invalid",
          fields: [expect.objectContaining({ path: "X-Tab-Token" })],
        }),
      );
  });
});
