/** A payment's id: `pay_` and a UUID (docs/protocol.md, "`p:` payment update"), as the text of a pattern. */
const ID = "pay_[0-9a-f-]{36}";

/** Whether a text is a payment id; anything else is never looked up. */
export const PAYMENT_ID = new RegExp(`^${ID}$`);

/** The approval page's path for a payment, `/approve/<paymentId>`; the id is its first group. */
export const APPROVE_PATH = new RegExp(`^/approve/(${ID})$`);

/** The operator page's path (docs/operator-page.md): the same single-page app, behind the operator token. */
export const OPERATOR_PAGE_PATH = /^\/operator\/?$/;
