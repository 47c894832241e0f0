import { describe, expect, it } from "vitest";
import { CarriedState, KEPT_AFTER_CLOSE_S } from "./renewal.js";

const A = "0x00000000000000000000000000000000000000aa";
const nonce = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

describe("what a renewal carries of the token's authorizations", () => {
  // A black-box review (h33): dropped as soon as its window closed, a used authorization read
  // unused on the new chain, and a payment whose service was killed mid-payment (resolved at its
  // restart) was called failed though the payee kept the money.
  it("drops a used authorization 5 minutes after its signed window closed, keeps open and unknown ones", () => {
    const carried = new CarriedState();
    carried.authorizations.set(`${A}:${nonce(1)}`, 1_000n); // closed at 1,000
    carried.authorizations.set(`${A}:${nonce(2)}`, 5_000n); // open until 5,000
    carried.authorizations.set(`${A}:${nonce(3)}`, null); // window unknown (cancelled, or sent through a contract)
    carried.dropClosed(1_000n + KEPT_AFTER_CLOSE_S - 1n);
    expect(carried.authorizations.size).toBe(3);
    carried.dropClosed(1_000n + KEPT_AFTER_CLOSE_S);
    expect([...carried.authorizations.keys()]).toEqual([`${A}:${nonce(2)}`, `${A}:${nonce(3)}`]);
    carried.dropClosed(10_000n);
    expect([...carried.authorizations.keys()]).toEqual([`${A}:${nonce(3)}`]);
  });

  it("names one storage slot per supply, balance, allowance and authorization, all distinct", () => {
    const carried = new CarriedState();
    carried.holders.add(A);
    carried.holders.add("0x00000000000000000000000000000000000000bb");
    carried.approvals.add(`${A}:0x00000000000000000000000000000000000000bb`);
    carried.authorizations.set(`${A}:${nonce(1)}`, null);
    const slots = carried.tokenSlots();
    expect(slots).toHaveLength(5);
    expect(new Set(slots).size).toBe(5);
    expect(slots[0]).toBe(`0x${"0".repeat(64)}`); // totalSupply is slot 0
  });
});
