import { useEffect, useRef } from "react";
import type { ApprovalView } from "../../../src/protocol/approval-view.js";
import { isUnresolved } from "../../../src/protocol/status.js";
import type { PaymentStatus } from "../../../src/protocol/stream.js";
import type { FinishPayload, PaymentUIMessage } from "./types.js";

/** How often a card that waits for approval asks the service what became of it, between turns. */
const RECHECK_MS = 10_000;

/** What a turn ends as once the payment it waited for is known (the service's word, not the page's clock). */
const FINISH_OF: Partial<Record<ApprovalView["status"], FinishPayload["finishReason"]>> = {
  settled: "payment-complete",
  failed: "payment-failed",
  rejected: "stop",
  expired: "stop",
  released: "stop",
  reserved: "payment-unclear",
  signed: "payment-unclear",
  submitted: "payment-unclear",
  unknown: "payment-unclear",
};

/**
 * What a card says once the ledger has moved on: the ask to approve ("Approve $0.01 ... before")
 * is over, or the payment it showed under way has ended. A payment paid while this page waited (on
 * the approval page, or before a reload cut its answer off) had its answer go elsewhere.
 */
const MESSAGE_OF: Partial<Record<ApprovalView["status"], string>> = {
  expired: "The time to approve has passed: nothing was signed or paid. Ask again for a new quote.",
  rejected: "The payment was declined: nothing was signed or paid.",
  released: "Nothing was paid.",
  settled: "Paid. Its answer did not come to this page; Payments lists the payment.",
  failed: "The payment failed: nothing was paid.",
};

/** What a card left unclear at the end of its turn (the answer was given) says once the chain has told. */
const UNCLEAR_MESSAGE_OF: Partial<Record<ApprovalView["status"], string>> = {
  settled: "Paid: the chain shows the payment settled.",
  failed: "Not paid: the chain shows the payment failed, and nothing moved.",
};

/** A card the ledger may still move on between turns: waiting for approval, or under way. */
const checkable = (status: PaymentStatus) => status === "awaiting_approval" || isUnresolved(status);

/**
 * A card left `awaiting_approval` with no turn running (a reload after Approve, a dropped answer,
 * an approval given on the approval page) may be paid, or lapsed, by now; so may a card left under
 * way (reserved, signed, submitted, unknown) when a reload or a dropped connection cut its answer
 * off. While no request runs, each such card asks the service (GET /api/approvals/:id; for a
 * payment that never waited for a wallet, a tab's or a held key's, GET /api/payments/:id as the
 * page's caller: its token, or none for the page's own anonymous payments) at once, when its window
 * ends and every 10 s, and takes the ledger's status, so the page never says "nothing was paid" of
 * a payment that went through, nor "Settling" of one that ended. A service that cannot be reached
 * changes nothing.
 */
export function useLedgerStatus(
  messages: PaymentUIMessage[],
  busy: boolean,
  setMessages: (update: (messages: PaymentUIMessage[]) => PaymentUIMessage[]) => void,
  token: () => string | undefined = () => undefined,
): void {
  const tokenRef = useRef(token);
  tokenRef.current = token;
  // The waiting cards as one string (`id@expiresAt@status,...`): the checks re-arm when it changes.
  const key = (busy ? [] : waitingCards(messages))
    .map((w) => `${w.paymentId}@${w.expiresAt ?? ""}@${w.status}`)
    .join(",");
  useEffect(() => {
    if (key === "") return;
    const waiting = key.split(",").map((entry) => {
      const [paymentId = "", at = "", shown = ""] = entry.split("@");
      return { paymentId, shown, expiresAt: at === "" ? Number.POSITIVE_INFINITY : Number(at) };
    });
    let stopped = false;
    const check = async () => {
      for (const { paymentId, shown } of waiting) {
        const status = await ledgerStatus(paymentId, tokenRef.current());
        if (stopped || status === undefined || status === shown) continue;
        setMessages((all) => withStatus(all, paymentId, status));
      }
    };
    void check();
    const timer = setInterval(() => void check(), RECHECK_MS);
    // Once more just after the first window ends: the page's clock says expired, the service decides.
    const ends = Math.min(...waiting.map((w) => w.expiresAt));
    const atEnd = Number.isFinite(ends)
      ? setTimeout(() => void check(), Math.max(0, ends - Date.now()) + 1_500)
      : undefined;
    return () => {
      stopped = true;
      clearInterval(timer);
      if (atEnd) clearTimeout(atEnd);
    };
  }, [key, setMessages]);
}

/** The cards the ledger may still move on (see above), with the end of their approval window. */
export function waitingCards(
  messages: PaymentUIMessage[],
): { paymentId: string; status: PaymentStatus; expiresAt?: number }[] {
  return messages.flatMap((m) =>
    m.parts.flatMap((p) => {
      if (p.type !== "data-payment" || !checkable(p.data.status)) return [];
      const at = p.data.approval?.expiresAt ? Date.parse(p.data.approval.expiresAt) : Number.NaN;
      const { paymentId, status } = p.data;
      return [{ paymentId, status, ...(Number.isFinite(at) ? { expiresAt: at } : {}) }];
    }),
  );
}

async function ledgerStatus(paymentId: string, token?: string): Promise<ApprovalView["status"] | undefined> {
  const id = encodeURIComponent(paymentId);
  const asked = await statusAt(`/api/approvals/${id}`, {});
  if (asked !== "not_found") return asked;
  // Never asked of a wallet (paid from a tab, or by a held key): read as the page's caller (h52).
  const read = await statusAt(`/api/payments/${id}`, token ? { authorization: `Bearer ${token}` } : {});
  return read === "not_found" ? undefined : read;
}

async function statusAt(
  url: string,
  headers: Record<string, string>,
): Promise<ApprovalView["status"] | "not_found" | undefined> {
  try {
    const response = await fetch(url, { cache: "no-store", headers });
    if (response.status === 404) return "not_found";
    if (!response.ok) return undefined;
    const view = (await response.json()) as Partial<ApprovalView>;
    return typeof view.status === "string" ? view.status : undefined;
  } catch {
    return undefined;
  }
}

/** The conversation with that payment's card at the ledger's status, and its turn's end said anew. */
export function withStatus(
  messages: PaymentUIMessage[],
  paymentId: string,
  status: ApprovalView["status"],
): PaymentUIMessage[] {
  return messages.map((message) => {
    const at = message.parts.findIndex((p) => p.type === "data-payment" && p.data.paymentId === paymentId);
    const part = message.parts[at];
    if (part?.type !== "data-payment" || !checkable(part.data.status)) return message;
    const parts = [...message.parts];
    const { message: _ask, ...data } = part.data;
    const said = (part.data.status === "unknown" ? UNCLEAR_MESSAGE_OF : MESSAGE_OF)[status];
    parts[at] = { ...part, data: { ...data, status, ...(said ? { message: said } : {}) } };
    const statuses = parts.flatMap((p) => (p.type === "data-payment" ? [p.data.status] : []));
    const finish = message.metadata;
    // A turn that ended waiting, or unclear because its answer broke off, ends as the ledger says:
    // still waiting while a card waits, unclear while one is under way.
    const reason = statuses.includes("awaiting_approval")
      ? undefined
      : statuses.some(isUnresolved)
        ? "payment-unclear"
        : FINISH_OF[status];
    const open = finish?.finishReason === "approval-required" || finish?.finishReason === "payment-unclear";
    const metadata = open && reason ? { ...finish, finishReason: reason } : finish;
    return { ...message, parts, ...(metadata ? { metadata } : {}) };
  });
}
