import { useEffect, useState } from "react";
import { type AskedMarks, loadAsked, saveAsked } from "./persist.js";
import type { PaymentUIMessage } from "./types.js";

/**
 * A turn that stopped to ask for an approval: mark where its asking words end (Message.tsx), kept
 * for this tab so a reload still tells the asking words from the answer's.
 */
export function useAskedMarks(messages: PaymentUIMessage[], busy: boolean) {
  const [asked, setAsked] = useState<AskedMarks>(loadAsked);
  useEffect(() => {
    const last = messages.at(-1);
    if (busy || last?.role !== "assistant" || last.metadata?.finishReason !== "approval-required") return;
    const end = last.parts.length;
    setAsked((marks) => {
      if (marks[last.id]?.includes(end)) return marks;
      const next = { ...marks, [last.id]: [...(marks[last.id] ?? []), end] };
      saveAsked(next);
      return next;
    });
  }, [busy, messages]);
  const clearAsked = () => {
    setAsked({});
    saveAsked({});
  };
  return { asked, clearAsked };
}
