import { formatUsd } from "../../money/index.js";
import type { TabMeter } from "../../protocol/index.js";
import type { TabAccess, TabLookup, TabPass, TabRefusal } from "../ports/index.js";
import {
  type Admission,
  type AdmissionPolicy,
  type AdmissionRequest,
  admit,
  type LimitRefusal,
  type PaymentOutcome,
  type Requirement,
} from "../rules/index.js";
import { type BalanceBook, BalanceReads } from "./balances.js";
import { type Admitted, refuseOverLimit } from "./pipeline-types.js";
import type { PaymentRun } from "./run.js";

/**
 * Paying from a tab (docs/payments.md#tabs): the pipeline's steps that differ when the request
 * names one. The tab's session key signs in place of the user's wallet, only offers on the tab's
 * network and asset can use it, and the reservation checks the tab beside every limit.
 */

/**
 * The request's tab, looked up while the service is probed: the one its token names, or the one
 * that serves its caller for its wallet (undefined: none).
 */
export function findTab(
  tabs: TabAccess | undefined,
  request: Parameters<TabAccess["find"]>[0],
): Promise<TabLookup | undefined> | undefined {
  if (!tabs)
    return request.tab ? Promise.resolve({ ok: false, message: "This service keeps no tabs." }) : undefined;
  if (!request.tab && !(request.servedTabs && request.caller)) return undefined;
  const finding = tabs.find(request);
  finding.catch(() => {}); // awaited only when no server key pays; a failure then is the run's
  return finding;
}

/**
 * The tab a request pays from, for its quote as for its payment: the one it names (a refusal when
 * that is unusable), else, when no server key signs, one serving its caller.
 */
export async function tabInUse(
  request: { tab?: string },
  serverKey: boolean,
  lookup: () => Promise<TabLookup | undefined> | undefined,
): Promise<TabLookup | undefined> {
  return request.tab !== undefined || !serverKey ? await lookup() : undefined;
}

/** A named tab this request may not pay from, refused before any payment. */
export function tabUnusable(tab: { message: string }) {
  return { kind: "refused" as const, reason: "tab_unusable" as const, message: tab.message };
}

/**
 * Admission for a payment: as if a server key signs, among the offers the tab can pay (its network,
 * its asset), when the request has a tab and that lets the tab pay; else as without a tab (a server
 * key, or the wallet asked).
 */
export function admitWith(
  offers: Requirement[],
  asked: Omit<AdmissionRequest, "serverKey" | "shownUsd"> & { shownUsd: string | undefined; now: number },
  policy: AdmissionPolicy,
  serverKey: boolean,
  pass: TabPass | undefined,
): { admission: Admission; viaTab?: TabPass } {
  const { shownUsd, now, ...rest } = asked;
  const request = { ...rest, ...(shownUsd !== undefined ? { shownUsd } : {}) };
  const allowed = request.limits.allowedNetworks;
  if (pass && (!allowed || allowed.includes(pass.network))) {
    const limits = { ...request.limits, allowedNetworks: [pass.network] };
    const assets = { [pass.network]: [pass.asset] };
    const tabbed = { ...request, limits, serverKey: true, sessionKey: pass.session };
    const admission = admit(offers, tabbed, { ...policy, assets });
    // A serving tab pays only what it can as read (enough left, the signed window within it), else
    // the wallet is asked as without a tab; a tab the chat names refuses instead (its reservation
    // decides, as for a race for its last cents).
    if (admission.ok && admission.payer.by === "server" && (!pass.served || tabCovers(pass, admission, now)))
      return { admission, viaTab: pass };
  }
  // The session key is the wallet's money all the same: no offer may make it the fee payer either.
  const sessionKey = pass ? { sessionKey: pass.session } : {};
  return { admission: admit(offers, { ...request, serverKey, ...sessionKey }, policy) };
}

function tabCovers(pass: TabPass, chosen: { amount: bigint; timeoutSeconds: number }, now: number): boolean {
  return chosen.amount <= pass.left && now + chosen.timeoutSeconds * 1000 <= pass.endsAt.getTime();
}

const money = (atomic: bigint) => ({ atomic: atomic.toString(), usd: formatUsd(atomic) });

/** A payment from the tab: its updates name it, and the session key's balance is what pays. */
export function fromTab(
  admitted: Admitted,
  pass: TabPass,
  book: BalanceBook,
  assets: Record<string, string[]>,
): BalanceReads {
  // One meter: what the reservation says the tab holds is what the budget shows too.
  admitted.run.facts.tabMeter = admitted.run.facts.openTab ?? tabMeter(pass);
  return new BalanceReads(book, { ...admitted.wallet, address: pass.session }, assets, admitted.limits);
}

/** What a payment's updates say of its tab. */
export function tabMeter(pass: TabPass): TabMeter {
  return {
    id: pass.tabId,
    amount: money(pass.amount),
    left: money(pass.left),
    endsAt: pass.endsAt.toISOString(),
  };
}

const TAB_WORDS: Record<TabRefusal["tab"], string> = {
  missing: "is not this payment's to use",
  closed: "has closed",
  ending: "ends before this payment's window would",
  short: "holds too little",
};

/** A refusal by the reservation: a limit (as without a tab) or the tab itself, named. */
export function refuseReserved(
  run: PaymentRun,
  refusal: LimitRefusal | TabRefusal,
  pass: TabPass | undefined,
): PaymentOutcome {
  if (!("tab" in refusal)) return refuseOverLimit(run, refusal);
  const tabId = pass?.tabId ?? "";
  const leftUsd = formatUsd(refusal.tabLeftAtomic);
  const message = `Paying $${formatUsd(run.facts.amount)} from tab ${tabId} is refused: the tab ${TAB_WORDS[refusal.tab]} ($${leftUsd} left of $${formatUsd(pass?.amount ?? 0n)}).`;
  return run.refuse("limit_exceeded", message, {
    limit: "tab",
    tabId,
    tab: refusal.tab,
    limitUsd: formatUsd(pass?.amount ?? 0n),
    remainingUsd: leftUsd,
  });
}
