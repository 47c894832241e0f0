import type { TabOpened } from "../protocol/tab-types.js";
import { notUsdc } from "../protocol/usdc.js";
import {
  ATA_PROGRAM,
  decodeSolanaMessage,
  MEMO_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAMS,
  TRANSFER_CHECKED,
  u64,
} from "./solana-message.js";

/**
 * What a Solana tab's funding may do, checked before the wallet is asked (docs/clients.md, "Tabs"):
 * the service builds this transaction and the wallet is its fee payer, so a wallet that signed any
 * transaction it was handed could be made to move anything. Only these instructions pass:
 *
 * - create the session key's token account (Associated Token program, idempotent), paid by the
 *   wallet, owned by the session key;
 * - one `TransferChecked` from the wallet of exactly the tab's amount into that account, of the
 *   network's USDC where it is known (src/protocol/usdc.ts);
 * - system transfers from the wallet to the session key of at most {@link MAX_LAMPORTS} in all (what
 *   its return's fee and its account need, returned when the tab closes);
 * - a memo.
 *
 * Throws a TypeError naming what is wrong; EVM fundings are checked as approvals are (typed data).
 */

/** 0.01 SOL: far above a system account's rent-exempt minimum and a fee, far below anything worth taking. */
const MAX_LAMPORTS = 10_000_000n;

export async function checkSolanaFunding(
  opened: Pick<TabOpened, "sign" | "wallet" | "network" | "session" | "amount">,
): Promise<void> {
  if (opened.sign.kind !== "solana-transaction") return;
  const message = await decodeSolanaMessage(opened.sign.transaction);
  const fail = (what: string): never => {
    throw new TypeError(`The tab's funding transaction ${what}: nothing was signed.`);
  };
  if (message.feePayer !== opened.wallet) fail(`is not paid for by your wallet ${opened.wallet}`);
  if (message.usesLookupTables) fail("reads accounts from lookup tables");
  if (typeof opened.network !== "string" || !opened.network.startsWith("solana:"))
    fail(`is for no Solana network (${String(opened.network)})`);
  let account: string | undefined;
  let moved = 0;
  let lamports = 0n;
  for (const { program, accounts, data } of message.instructions) {
    if (program === MEMO_PROGRAM) continue;
    if (program === ATA_PROGRAM) {
      // CreateIdempotent: payer, account, owner, mint, system program, token program.
      if (data[0] !== 1 || accounts[0] !== opened.wallet || accounts[2] !== opened.session)
        fail("opens an account that is not the session key's");
      account = accounts[1];
    } else if (program && TOKEN_PROGRAMS.has(program)) {
      // TransferChecked (12): source, mint, destination, authority; amount, decimals.
      if (data[0] !== TRANSFER_CHECKED || data.length < 10)
        fail("asks the token program for something else than a transfer");
      const token = notUsdc(opened.network, accounts[1] ?? "");
      if (token) fail(token);
      if (accounts[3] !== opened.wallet) fail("moves tokens your wallet does not own");
      if (account === undefined || accounts[2] !== account)
        fail("moves tokens elsewhere than the session key");
      if (u64(data, 1) !== BigInt(opened.amount.atomic))
        fail(`moves another amount than $${opened.amount.usd}`);
      moved += 1;
    } else if (program === SYSTEM_PROGRAM) {
      // Transfer (2): from, to; lamports.
      const kind = data.length >= 12 ? new DataView(data.buffer, data.byteOffset).getUint32(0, true) : -1;
      if (kind !== 2 || accounts[0] !== opened.wallet || accounts[1] !== opened.session)
        fail("asks the system program for something else than the session key's fee");
      lamports += u64(data, 4);
      if (lamports > MAX_LAMPORTS) fail("sends the session key more SOL than its fee and account need");
    } else {
      fail(`calls a program it should not (${program ?? "unknown"})`);
    }
  }
  if (moved !== 1) fail("does not move the tab's amount exactly once");
}
