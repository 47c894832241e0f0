import { useEffect, useMemo, useRef, useState } from "react";
import {
  type ApprovalSignFunction,
  ApprovalSigningError,
  PAYMENT_TOOL,
  type PaymentApprovalDescriptor,
} from "../../../src/client/index.js";
import type { ApprovalState, PaymentToolState } from "../components/card-types.js";
import type { PageWallet } from "../wallet/types.js";
import type { PaymentUIMessage } from "./types.js";

/**
 * The page answers approvals as any `useChat` UI does: through the AI SDK's tool-approval parts
 * (`tool-x402_payment`, src/client/tool-parts.ts) and `addToolApprovalResponse`; the transport's
 * `signer` is the connected page wallet. A payment's card reads its tool part's state from here.
 */

export type { PaymentToolState };

/** A message's payment tool parts, by payment id. */
export function paymentToolStates(message: PaymentUIMessage | undefined): Map<string, PaymentToolState> {
  const states = new Map<string, PaymentToolState>();
  for (const part of message?.parts ?? []) {
    if (part.type !== `tool-${PAYMENT_TOOL}` || !("toolCallId" in part)) continue;
    const refusal =
      part.state === "approval-requested"
        ? (part.approval.descriptor as Partial<PaymentApprovalDescriptor> | undefined)?.refusal
        : undefined;
    const error = part.state === "output-error" ? part.errorText : refusal;
    states.set(part.toolCallId, { state: part.state, error: typeof error === "string" ? error : undefined });
  }
  return states;
}

/**
 * The transport's signer over the page's current wallet (its own `approve`: EIP-1193 through viem,
 * Wallet Standard, the devnet's test keys), and what each card is doing meanwhile (signing,
 * sending); those phases end with the request (`busy` false). `answerWallet` is the paying wallet
 * of the answer being sent, laid over the request's fields.
 */
export function usePageApprovals(wallet: PageWallet | undefined, localNetworks: ReadonlySet<string>) {
  const current = useRef({ wallet, localNetworks });
  current.current = { wallet, localNetworks };
  const [approvals, setApprovals] = useState<Record<string, ApprovalState>>({});
  const answerWallet = useRef<string | undefined>(undefined);
  const signer = useMemo<ApprovalSignFunction>(
    () => async (update) => {
      const { wallet, localNetworks } = current.current;
      if (wallet?.address.toLowerCase() !== update.approval.wallet.toLowerCase())
        throw new ApprovalSigningError(`Connect wallet ${update.approval.wallet} to approve.`);
      const id = update.paymentId;
      setApprovals((a) => ({ ...a, [id]: { phase: "signing" } }));
      const local = update.network !== undefined && localNetworks.has(update.network);
      const answer = await wallet.approve(update, { local });
      setApprovals((a) => ({ ...a, [id]: { phase: "sending" } }));
      return answer;
    },
    [],
  );
  return { signer, approvals, setApprovals, answerWallet };
}

/** Once no request runs, no card is signing or sending any more (an error the page set stays). */
export function useEndPhases(
  busy: boolean,
  setApprovals: (update: (a: Record<string, ApprovalState>) => Record<string, ApprovalState>) => void,
): void {
  useEffect(() => {
    if (busy) return;
    setApprovals((a) =>
      Object.fromEntries(Object.entries(a).filter(([, state]) => state.phase === "idle" && state.error)),
    );
  }, [busy, setApprovals]);
}
