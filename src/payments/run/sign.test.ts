import { describe, expect, it } from "vitest";
import { SameTransactionError } from "../ports/index.js";
import type { SignedPayment } from "../x402/index.js";
import { reserveSigned } from "./sign.js";

/**
 * A Solana transaction another instance signed identically (a seller's fixed memo, one blockhash)
 * is refused by the ledger (SameTransactionError); the payment is signed anew and reserved then.
 */
const signedAs = (messageHash: string): SignedPayment =>
  ({
    headers: { "PAYMENT-SIGNATURE": messageHash },
    authorization: { kind: "svm-exact", messageHash },
  }) as unknown as SignedPayment;

describe("reserveSigned", () => {
  it("signs anew while another payment holds the transaction, and sends what it reserved", async () => {
    const held = new Set(["m1", "m2"]);
    const built = ["m2", "m3"];
    const reserved: string[] = [];
    const sent = await reserveSigned(
      signedAs("m1"),
      async () => signedAs(built.shift() ?? "none"),
      async (authorization) => {
        const hash = authorization.messageHash ?? "";
        if (held.has(hash)) throw new SameTransactionError("pay_x");
        reserved.push(hash);
        return undefined;
      },
    );
    expect(reserved).toEqual(["m3"]);
    expect(sent).toEqual({ signed: signedAs("m3"), answer: undefined });
  });

  it("gives up after ten builds, or when signing anew fails, with nothing sent; other errors pass", async () => {
    const clash = async () => {
      throw new SameTransactionError("pay_x");
    };
    let builds = 0;
    const anew = async () => {
      builds += 1;
      return signedAs(`m${builds}`);
    };
    expect(await reserveSigned(signedAs("m0"), anew, clash)).toEqual({ unsigned: true });
    expect(builds).toBe(9);
    expect(await reserveSigned(signedAs("m0"), async () => undefined, clash)).toEqual({ unsigned: true });
    const down = new Error("store down");
    await expect(
      reserveSigned(signedAs("m0"), anew, async () => {
        throw down;
      }),
    ).rejects.toBe(down);
  });
});
