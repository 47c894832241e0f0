import type { Migration } from "./migration.js";

export const retiredKeyTokens: Migration = {
  id: 16,
  name: "retired operator key tokens",
  // A rotated key's old token must stop working wherever else it is listed (a SIGNERS_FILE entry,
  // AUTH_TOKENS): without a record of it, it was an unknown key's token again and fell back to the
  // identity listed there, paying with none of the key's caps or pause. A rotation writes the old
  // token's hash here in the same statement; every instance reads them with the keys.
  up: (s) => [
    `CREATE TABLE ${s}.operator_retired_tokens (
        token_hash text PRIMARY KEY,
        key_name text NOT NULL,
        retired_at timestamptz NOT NULL
      )`,
  ],
};
