import type { Migration } from "./migration.js";

export const tabsForCallers: Migration = {
  id: 15,
  name: "tabs that serve their caller",
  // A tab opened through MCP (`open_tab`) and funded on the approval page is used by its caller's
  // requests for its wallet without a token (src/payments/tabs). The partial index finds the open
  // one of a caller and wallet in one read, which every such request makes.
  up: (s) => [
    `ALTER TABLE ${s}.tabs ADD COLUMN serves_caller boolean NOT NULL DEFAULT false`,
    `CREATE INDEX tabs_serving_idx ON ${s}.tabs (caller, wallet, created_at DESC)
       WHERE serves_caller AND status = 'open'`,
  ],
};
