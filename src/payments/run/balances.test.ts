import { describe, expect, it } from "vitest";
import { BALANCE_FRESH_MS, BalanceBook } from "./balances.js";

const NET = "eip155:31337";
const USDC = "0xUSDC";
const OWNER = "0xOwner";

/** A chain whose balance is whatever the test sets, counting the reads. */
function chain(initial: bigint) {
  const state = { balance: initial, reads: 0, fail: false };
  return {
    state,
    chains: {
      balance: async () => {
        state.reads++;
        if (state.fail) throw new Error("rpc down");
        return state.balance;
      },
    },
  };
}

describe("BalanceBook", () => {
  it("answers from a recent read, less what was sent since, without asking the chain again", async () => {
    let now = 0;
    const { state, chains } = chain(100n);
    const book = new BalanceBook(chains, () => now);
    expect(await book.covering(NET, USDC, OWNER, 10n)).toBe(100n);
    book.debit(NET, USDC, OWNER, 30n);
    now += BALANCE_FRESH_MS - 1;
    expect(await book.covering(NET, USDC, OWNER, 70n)).toBe(70n);
    expect(state.reads).toBe(1);
  });

  it("asks the chain when the known balance cannot cover the amount (a wallet topped up is not refused)", async () => {
    const { state, chains } = chain(50n);
    const book = new BalanceBook(chains, () => 0);
    expect(await book.covering(NET, USDC, OWNER, 10n)).toBe(50n);
    state.balance = 500n;
    expect(await book.covering(NET, USDC, OWNER, 100n)).toBe(500n);
    expect(state.reads).toBe(2);
    // Still short after asking: the chain's answer is what the refusal names.
    expect(await book.covering(NET, USDC, OWNER, 1000n)).toBe(500n);
  });

  it("reads again once the read is old, and after an outcome that was not a clean settlement", async () => {
    let now = 0;
    const { state, chains } = chain(100n);
    const book = new BalanceBook(chains, () => now);
    await book.covering(NET, USDC, OWNER, 1n);
    now += BALANCE_FRESH_MS;
    state.balance = 5n;
    expect(await book.covering(NET, USDC, OWNER, 1n)).toBe(5n);
    state.balance = 4n;
    book.forget(NET, USDC, OWNER);
    expect(await book.covering(NET, USDC, OWNER, 1n)).toBe(4n);
    expect(state.reads).toBe(3);
  });

  it("shares one read under way, keeps wallets, assets and networks apart, and is undefined when unreadable", async () => {
    const { state, chains } = chain(100n);
    const book = new BalanceBook(chains, () => 0);
    book.prefetch(NET, USDC, OWNER);
    book.prefetch(NET, USDC.toLowerCase(), OWNER);
    expect(await book.covering(NET, USDC, OWNER, 1n)).toBe(100n);
    expect(state.reads).toBe(1);
    // Solana addresses are case sensitive: two owners that differ only in case are two wallets.
    const SOL = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
    await book.covering(SOL, "Mint", "AbC", 1n);
    await book.covering(SOL, "Mint", "abc", 1n);
    await book.covering(SOL, "mint", "AbC", 1n);
    expect(state.reads).toBe(4);
    state.reads = 1;
    await book.covering(NET, USDC, "0xOther", 1n);
    await book.covering("eip155:84532", USDC, OWNER, 1n);
    expect(state.reads).toBe(3);
    state.fail = true;
    expect(await book.covering(NET, "0xOtherToken", OWNER, 1n)).toBeUndefined();
    // A failed read leaves no entry behind: the next payment asks again.
    state.fail = false;
    expect(await book.covering(NET, "0xOtherToken", OWNER, 1n)).toBe(100n);
  });

  it("remembers a bounded number of wallets, forgetting the oldest reads first", async () => {
    const { state, chains } = chain(100n);
    const book = new BalanceBook(chains, () => 0, 3);
    for (const owner of ["0xA", "0xB", "0xC", "0xD"]) await book.covering(NET, USDC, owner, 1n);
    expect(state.reads).toBe(4);
    await book.covering(NET, USDC, "0xD", 1n);
    await book.covering(NET, USDC, "0xB", 1n);
    expect(state.reads).toBe(4);
    await book.covering(NET, USDC, "0xA", 1n);
    expect(state.reads).toBe(5);
  });
});
