import { ledger } from "./001-ledger.js";
import { reserveInOneCall } from "./002-reserve-in-one-call.js";
import { approvalInWallet } from "./003-approval-in-wallet.js";
import { budgetReadAndMoves } from "./004-budget-read-and-moves.js";
import { callerOfEveryPayment } from "./005-caller-of-every-payment.js";
import { runningSpendTotals } from "./006-running-spend-totals.js";
import { idempotencyLeases } from "./007-idempotency-leases.js";
import { historyByCaller } from "./008-history-by-caller.js";
import { deliveredAnswers } from "./009-delivered-answers.js";
import { operatorKeysAndPauses } from "./010-operator-keys-and-pauses.js";
import { callerSpendTotals } from "./011-caller-spend-totals.js";
import { auditTrail } from "./012-audit-trail.js";
import { tabs } from "./013-tabs.js";
import { walletSignIn } from "./014-wallet-sign-in.js";
import { tabsForCallers } from "./015-tabs-for-callers.js";
import { retiredKeyTokens } from "./016-retired-key-tokens.js";
import { onePaymentPerSolanaTransaction } from "./017-one-payment-per-solana-transaction.js";
import { idempotencyKeyExpiry } from "./018-idempotency-key-expiry.js";
import type { Migration } from "./migration.js";

export type { Migration } from "./migration.js";

/**
 * Every migration, in the order they apply (src/store/migrate.ts runs the ones a database lacks).
 * A database records the ids it ran, and processes of earlier versions may still run against it:
 * append a new migration in a module of its own (the next number); never edit one that has shipped.
 */
export const MIGRATIONS: readonly Migration[] = [
  ledger,
  reserveInOneCall,
  approvalInWallet,
  budgetReadAndMoves,
  callerOfEveryPayment,
  runningSpendTotals,
  idempotencyLeases,
  historyByCaller,
  deliveredAnswers,
  operatorKeysAndPauses,
  callerSpendTotals,
  auditTrail,
  tabs,
  walletSignIn,
  tabsForCallers,
  retiredKeyTokens,
  onePaymentPerSolanaTransaction,
  idempotencyKeyExpiry,
];
