import { describe, expect, it } from "vitest";
import type { TabPass } from "../ports/index.js";
import type { AdmissionPolicy, EffectiveLimits, Requirement } from "../rules/index.js";
import { admitWith } from "./tab-pay.js";

/** Admission when a tab may pay (pure): the tab's session key signs in the wallet's place. */

const NETWORK = "solana:devnet";
/** An hour before the tab below ends. */
const NOW = Date.parse("2026-11-30T23:00:00Z");
const MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
const WALLET = "Fye9P7MPYWQM5xvLNKYBa3FAKHQHNCvPjMd4GmRAJNSH";
const SESSION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const FACILITATOR = "FaciL1tator1111111111111111111111111111111";
const offer = (feePayer: string, amount = "10000"): Requirement => ({
  scheme: "exact",
  network: NETWORK,
  amount,
  asset: MINT,
  payTo: "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM",
  maxTimeoutSeconds: 60,
  extra: { feePayer },
});
const limits: EffectiveLimits = {
  perTransaction: 1_000_000n,
  perRequest: 2_000_000n,
  daily: 10_000_000n,
  allowedNetworks: [NETWORK],
  allowedServices: "any",
};
const policy: AdmissionPolicy = {
  assets: { [NETWORK]: [MINT] },
  preferredNetworks: [NETWORK],
  maxTimeoutSeconds: 300,
  minTimeLeftMs: 5_000,
};
const pass: TabPass = {
  tabId: "tab_1",
  network: NETWORK,
  asset: MINT,
  session: SESSION,
  amount: 50_000n,
  left: 50_000n,
  endsAt: new Date("2026-12-01T00:00:00Z"),
  // Admission never signs: a signer that would fail the test if it were asked.
  signer: {
    canSign: () => Promise.reject(new Error("admission signed")),
    signerFor: () => Promise.reject(new Error("admission signed")),
  } as unknown as TabPass["signer"],
};
const asked = {
  wallet: { chain: "solana" as const, address: WALLET },
  limits,
  timeLeftMs: 60_000,
  shownUsd: undefined,
  now: NOW,
};

describe("admission from a tab", () => {
  it("pays a fair offer from the tab", () => {
    const { admission, viaTab } = admitWith([offer(FACILITATOR)], asked, policy, false, pass);
    expect(admission).toMatchObject({ ok: true, payer: { by: "server" } });
    expect(viaTab).toBe(pass);
  });

  /*
   * Found by a black-box run: a tab that had run out (or would end within the payment's window)
   * refused the payment, where the docs say the wallet is asked as without a tab; an MCP caller
   * could not pay at all until it closed the tab.
   */
  it("a serving tab (MCP) asks the wallet when it holds too little, or ends within the payment's window", () => {
    const served = { ...pass, served: true };
    const short = admitWith([offer(FACILITATOR)], asked, policy, false, { ...served, left: 9_999n });
    expect(short.viaTab).toBeUndefined();
    expect(short.admission).toMatchObject({ ok: true, payer: { by: "wallet" } });
    const ending = { ...served, endsAt: new Date(NOW + 30_000) };
    const late = admitWith([offer(FACILITATOR)], asked, policy, false, ending);
    expect(late.viaTab).toBeUndefined();
    expect(late.admission).toMatchObject({ ok: true, payer: { by: "wallet" } });
    // A tab the chat names by its token stays the payer: its reservation refuses, naming the tab.
    expect(
      admitWith([offer(FACILITATOR)], asked, policy, false, { ...pass, left: 9_999n }).viaTab,
    ).toBeDefined();
  });

  /*
   * Found by a black-box run: an offer naming the tab's session key as its fee payer was signed
   * by that key alone. It paid the fee, the seller sent it without a facilitator, and the key then
   * held too little SOL to send the tab's rest back to the wallet.
   */
  it("never lets the tab's session key be the fee payer, nor the wallet's: the fair offer or none", () => {
    const trap = offer(SESSION, "1");
    const both = admitWith([offer(FACILITATOR), trap], asked, policy, false, pass);
    expect(both.viaTab).toBe(pass);
    expect(both.admission).toMatchObject({ ok: true, offer: { extra: { feePayer: FACILITATOR } } });

    // The trap alone: refused, not paid from the tab nor asked of the wallet.
    const alone = admitWith([trap], asked, policy, false, pass);
    expect(alone.viaTab).toBeUndefined();
    expect(alone.admission).toMatchObject({ ok: false, reason: "no_acceptable_offer" });
    expect(JSON.stringify(alone.admission)).toContain("wallet_pays_fee");

    const walletPays = admitWith([offer(WALLET)], asked, policy, false, pass);
    expect(walletPays.viaTab).toBeUndefined();
    expect(walletPays.admission).toMatchObject({ ok: false, reason: "no_acceptable_offer" });
  });
});
