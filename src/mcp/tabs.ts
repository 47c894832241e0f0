import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod/v4";
import { parseUsd } from "../money/index.js";
import type { Payer } from "../payments/face.js";
import type { TabDesk } from "../payments/index.js";
import { TAB_ID, utcClock } from "../protocol/index.js";
import { okResult, refusalResult, thrownResult } from "./results.js";
import { standard } from "./tools.js";

/**
 * Tabs through MCP (docs/mcp.md, "Tabs"): `open_tab` opens a tab that serves this caller and hands
 * back the approval page's address, where the user's wallet funds it with one signature; from then
 * on this caller's `pay_quote` calls for that wallet pay from it without asking, until it ends or
 * `close_tab` closes it (what is left returns to the wallet). No tool holds or shows its token.
 */

export const TAB_TOOLS = {
  open_tab: {
    title: "Open a tab",
    description:
      "Ask the user's wallet for a tab: up to amountUsd the wallet funds with one signature on the approval page (approvalUrl, show it to the user); once open, pay_quote pays from it with no further approval, within the same limits, until it ends; what is left returns to the wallet.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  close_tab: {
    title: "Close a tab",
    description:
      "Close a tab this caller opened (by its tabId): nothing more is paid from it, and what is left returns to the user's wallet.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
} as const;

export const TAB_INPUTS_ZOD = {
  open_tab: z.strictObject({
    amountUsd: z
      .string()
      .regex(/^\d{1,6}(\.\d{1,6})?$/, 'a USD amount such as "0.50"')
      .describe("How much the tab may hold, in USD"),
    minutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .optional()
      .describe("How long it lasts (default: the service's)"),
  }),
  close_tab: z.strictObject({
    tabId: z.string().regex(TAB_ID, "must be a tabId from open_tab").describe("The tabId open_tab returned"),
  }),
};

export interface McpTabOptions {
  tabs: Pick<TabDesk, "open" | "closeServing">;
  approvalUrl: (id: string) => string;
  onError?: (error: unknown) => void;
}

export function registerTabTools(server: McpServer, payer: Payer, options: McpTabOptions): void {
  const guarded =
    <A>(run: (args: A) => Promise<CallToolResult>) =>
    async (args: A): Promise<CallToolResult> =>
      run(args).catch((error: unknown) => thrownResult(error, options.onError));
  server.registerTool(
    "open_tab",
    { ...TAB_TOOLS.open_tab, inputSchema: standard(TAB_INPUTS_ZOD.open_tab) },
    guarded(async ({ amountUsd, minutes }) => {
      if (!payer.wallet) return refusalResult("no_wallet", "This session names no wallet to fund a tab.");
      if (!payer.caller)
        return refusalResult("unauthorized", "A tab serves a caller: this session has no bearer token.");
      const amount = parseUsd(amountUsd);
      if (!amount.ok || amount.atomic <= 0n)
        return refusalResult("tab_invalid", `amountUsd ${amountUsd}: not an amount.`);
      const opened = await options.tabs.open(
        payer.caller,
        { wallet: payer.wallet, amount: amount.atomic, ...(minutes ? { seconds: minutes * 60 } : {}) },
        { serves: true },
      );
      const approvalUrl = options.approvalUrl(opened.tabId);
      const { token: _secret, sign: _sign, ...tab } = opened;
      return okResult(
        `${opened.words} Show the user approvalUrl: their wallet signs it there before ${utcClock(opened.signBy)}. Once the tab is open, pay_quote pays from it without asking.`,
        { ...tab, approvalUrl },
      );
    }),
  );
  server.registerTool(
    "close_tab",
    { ...TAB_TOOLS.close_tab, inputSchema: standard(TAB_INPUTS_ZOD.close_tab) },
    guarded(async ({ tabId }) => {
      if (!payer.caller) return refusalResult("tab_not_found", "No such tab of this caller.");
      const tab = await options.tabs.closeServing(payer.caller, tabId);
      const back = tab.refunded
        ? `$${tab.refunded.usd} returned to the wallet`
        : "what is left returns once its payments are final";
      return okResult(`The tab is ${tab.status}: $${tab.spent.usd} spent, ${back}.`, { ...tab });
    }),
  );
}
