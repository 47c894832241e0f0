import { describe, expect, it } from "vitest";
import type { OpenTabBody, TabOpened } from "../protocol/tab-types.js";
import { ApprovalSigningError } from "./signer.js";
import { TabClient } from "./tabs.js";

/**
 * A tab the service opens is checked against what was asked before the wallet is asked to sign:
 * a hostile service answering with a larger tab, another wallet's or another network's gets nothing.
 */

const WALLET = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";
const ASKED: OpenTabBody = { walletAddress: WALLET, amount: "0.05", network: "eip155:31337" };

function opened(over: { atomic?: string; wallet?: string; network?: string } = {}): TabOpened {
  return {
    tabId: "tab_1",
    token: "x4t_token",
    status: "awaiting_signature",
    wallet: over.wallet ?? WALLET,
    network: over.network ?? "eip155:31337",
    session: "0x000000000000000000000000000000000000bEEF",
    amount: { atomic: over.atomic ?? "50000", usd: "0.05" },
    signBy: new Date(Date.now() + 60_000).toISOString(),
    words: "Open a tab of $0.05",
    sign: { kind: "evm-typed-data" },
  } as unknown as TabOpened;
}

/** A client over a service that answers POST /api/tabs with `answer`; records whether it was asked to sign. */
function clientOf(answer: TabOpened) {
  const signed: string[] = [];
  const tabs = new TabClient({
    baseUrl: "http://tabs.example",
    fetch: (async () => new Response(JSON.stringify(answer), { status: 201 })) as typeof fetch,
  });
  const signer = async () => {
    signed.push("asked");
    return { paymentId: "tab_1", reject: true as const };
  };
  return { tabs, signer, signed };
}

describe("a tab the service opened", () => {
  // A black-box review (h34): only the service's own amount was checked against what it asked the
  // wallet to sign, so a $0.05 ask answered with a $500 tab was signed ("--yes" asked nothing).
  it.each([
    [
      "more than asked",
      opened({ atomic: "500000000" }),
      /funds 500000000 atomic units, more than the \$0.05/,
    ],
    [
      "for another wallet",
      opened({ wallet: "0x000000000000000000000000000000000000dEaD" }),
      /for the wallet/,
    ],
    ["on another network", opened({ network: "eip155:8453" }), /is on eip155:8453/],
  ])("%s is refused before the wallet is asked", async (_what, answer, message) => {
    const { tabs, signer, signed } = clientOf(answer);
    const refused = await tabs.openWith(ASKED, signer).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApprovalSigningError);
    expect((refused as ApprovalSigningError).mismatch).toBe(true);
    expect((refused as Error).message).toMatch(message);
    expect(signed).toEqual([]);
  });

  it("as asked, or for less, goes on to the wallet's own checks", async () => {
    for (const atomic of ["50000", "10000"]) {
      const { tabs, signer } = clientOf(opened({ atomic }));
      // This fake's signing request is empty, so the next check stops it: not this one.
      await expect(tabs.openWith(ASKED, signer)).rejects.not.toThrow(/The tab the service opened/);
    }
  });
});
