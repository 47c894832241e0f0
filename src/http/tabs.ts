import type { Context, Hono } from "hono";
import { parseWallet } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import type { TabDesk } from "../payments/index.js";
import { parseCloseTab, parseFundTab, parseOpenTab, parseTabToken, TAB_ID } from "../protocol/index.js";
import { readJsonBody } from "./body.js";
import { nodeRequest } from "./chat-request.js";
import type { Lifecycle } from "./lifecycle.js";
import { checkKeyWallet } from "./payer.js";
import { problemResponse } from "./problem.js";
import type { AuthVars, Middleware, QuotaVars, VarsContext } from "./vars.js";

/**
 * Tabs (docs/protocol.md, "Tabs"): open, fund, read, close. Behind the chat's auth: a tab opened
 * by a caller is that caller's, and every route also needs the tab's token (in the body, or the
 * `X-Tab-Token` header for a read). Another's tab, a wrong token and an unknown id are the same 404.
 */
export interface TabRoutesDeps {
  tabs: Pick<TabDesk, "open" | "fund" | "view" | "close" | "listForWallet">;
  /** The wallet of a wallet session token (`x4w_...`, src/signin): GET /api/tabs lists its tabs. */
  walletSessions?: (token: string) => Promise<{ wallet: string } | undefined>;
  auth: Middleware<AuthVars>;
  /** The per-IP quota (rate-limit.ts), before anything is opened, signed or settled. */
  limit: Middleware<QuotaVars>;
  logger: Logger;
  lifecycle: Pick<Lifecycle, "keep">;
}

const MAX_BODY_BYTES = 16 * 1024;
const NO_STORE = { "Cache-Control": "no-store" };

function tabId(c: Context): string {
  const id = c.req.param("tabId") ?? "";
  if (!TAB_ID.test(id)) throw new AppError("tab_not_found", "No such tab for this token and caller.");
  return id;
}

async function answer(
  c: Context,
  deps: TabRoutesDeps,
  work: (caller: string | undefined) => Promise<unknown>,
) {
  try {
    const { caller } = (c as unknown as VarsContext<AuthVars>).var;
    const running = work(caller);
    // A shutdown waits for a funding or a refund under way to be recorded.
    deps.lifecycle.keep(running);
    return c.json(await running, 200, NO_STORE);
  } catch (error) {
    if (error instanceof AppError) return problemResponse(error);
    deps.logger.warn("tab request failed", { err: error });
    return problemResponse(new AppError("internal", "The tab could not be handled; nothing was sent."));
  }
}

const body = (c: Context) => readJsonBody(c.req.raw, MAX_BODY_BYTES, nodeRequest(c));

export function mountTabRoutes(app: Hono, deps: TabRoutesDeps): void {
  app.post("/api/tabs", deps.limit, deps.auth, async (c) =>
    answer(c, deps, async (caller) => {
      const opening = parseOpenTab(await body(c), parseWallet);
      checkKeyWallet((c as unknown as VarsContext<AuthVars>).var.grant, opening.wallet.address);
      return deps.tabs.open(caller, opening);
    }),
  );
  app.post("/api/tabs/:tabId/fund", deps.limit, deps.auth, async (c) =>
    answer(c, deps, async (caller) => deps.tabs.fund(caller, tabId(c), parseFundTab(await body(c)))),
  );
  app.post("/api/tabs/:tabId/close", deps.limit, deps.auth, async (c) =>
    answer(c, deps, async (caller) => deps.tabs.close(caller, tabId(c), parseCloseTab(await body(c)))),
  );
  // A wallet signed in (src/signin) lists its own tabs; any other bearer is refused.
  app.get("/api/tabs", deps.limit, async (c) =>
    answer(c, deps, async () => {
      const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
      const session = bearer && deps.walletSessions ? await deps.walletSessions(bearer) : undefined;
      if (!session) throw new AppError("unauthorized", "Sign in with the wallet to list its tabs.");
      return { items: await deps.tabs.listForWallet(session.wallet) };
    }),
  );
  app.get("/api/tabs/:tabId", deps.auth, async (c) =>
    answer(c, deps, (caller) => deps.tabs.view(caller, tabId(c), parseTabToken(c.req.header("x-tab-token")))),
  );
}
