import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { walletSyntax } from "../protocol/wallet.js";
import { parseWallet } from "./index.js";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const HEX = "0123456789abcdefABCDEF";

/** Texts near both families' shapes: 0x + hex of about 40 digits, base58 of about 32 to 44. */
const nearAddress = fc.oneof(
  fc.string({ unit: fc.constantFrom(...HEX), minLength: 38, maxLength: 42 }).map((h) => `0x${h}`),
  fc.string({ unit: fc.constantFrom(...BASE58), minLength: 30, maxLength: 46 }),
  fc.string({ maxLength: 50 }),
);

describe("the full wallet check (src/chains) and the wire's syntax (src/protocol)", () => {
  it("agree on every address's shape: the full check refuses more, never less, and for the same reason", () => {
    fc.assert(
      fc.property(nearAddress, (input) => {
        const full = parseWallet(input);
        const syntax = walletSyntax(input);
        if (full.ok) {
          expect(syntax).toEqual({ ok: true, wallet: { chain: full.wallet.chain, address: input } });
        } else if (!syntax.ok) {
          expect(syntax.reason).toBe(full.reason);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
