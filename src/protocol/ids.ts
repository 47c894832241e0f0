/** A payment's id: `pay_` and a UUID (docs/protocol.md, "`p:` payment update"), as the text of a pattern. */
const ID = "pay_[0-9a-f-]{36}";

/** Whether a text is a payment id; anything else is never looked up. */
export const PAYMENT_ID = new RegExp(`^${ID}$`);

/** A tab's id: `tab_` and 24 hex digits (docs/protocol.md, "Tabs"). */
const TAB = "tab_[0-9a-f]{24}";

/** Whether a text is a tab's id. */
export const TAB_ID = new RegExp(`^${TAB}$`);

/**
 * The approval page's path, `/approve/<id>`: a payment's, or a tab's whose funding waits for the
 * wallet (MCP's `open_tab`); the id is its first group.
 */
export const APPROVE_PATH = new RegExp(`^/approve/(${ID}|${TAB})$`);

/**
 * Any link of the approval page's form, `/approve/<something>`: the page is served for it and asks
 * the API, which says plainly when no payment has that id (a mistyped link is a page, not JSON).
 */
export const APPROVE_LINK = /^\/approve\/([^/]{1,200})$/;

/** The operator page's path (docs/operator-page.md): the same single-page app, behind the operator token. */
export const OPERATOR_PAGE_PATH = /^\/operator\/?$/;
