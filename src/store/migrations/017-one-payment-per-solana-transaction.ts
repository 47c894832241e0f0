import type { Migration } from "./migration.js";

export const onePaymentPerSolanaTransaction: Migration = {
  id: 17,
  name: "one payment per signed Solana transaction",
  // A Solana payment's transaction is its offer's transfer, the seller's memo (when it names one)
  // and a recent blockhash: two payments of the same offer signed within one blockhash are the same
  // bytes. One process never signs a message twice (src/chains/svm-unique.ts); across instances
  // the ledger sees it: a reservation (or an approval) whose signed message
  // (`authorization_data.messageHash`) another payment holds is refused, and the payment is
  // signed anew (src/payments/run). A database that already holds such a pair still migrates: all
  // but the first of each are marked `signedTwice` and left out of the index.
  up: (s) => [
    `UPDATE ${s}.payments p
       SET authorization_data = p.authorization_data || '{"signedTwice": "yes"}'::jsonb
       FROM (
         SELECT payment_id, row_number() OVER (
             PARTITION BY authorization_data->>'messageHash' ORDER BY created_at, payment_id) AS n
           FROM ${s}.payments WHERE authorization_data->>'kind' = 'svm-exact'
       ) d
       WHERE d.payment_id = p.payment_id AND d.n > 1`,
    `CREATE UNIQUE INDEX payments_svm_message_idx ON ${s}.payments ((authorization_data->>'messageHash'))
       WHERE authorization_data->>'kind' = 'svm-exact' AND NOT authorization_data ? 'signedTwice'`,
  ],
};
