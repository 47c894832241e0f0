import { type KeyboardEvent, useEffect, useRef } from "react";

const FOCUSABLE = "button:not([disabled]), [href], input, select, textarea, [tabindex]:not([tabindex='-1'])";

/**
 * While open: focus moves into the popover and stays there (Tab wraps), Escape or a click outside
 * closes it, and focus goes back to the button that opened it. The popover floats over the page
 * (position: absolute), so opening it moves nothing.
 */
export function useMenuFocus(open: boolean, setOpen: (open: boolean) => void) {
  const trigger = useRef<HTMLButtonElement>(null);
  const popover = useRef<HTMLDivElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) {
      popover.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
      const outside = (event: PointerEvent) => {
        const target = event.target as Node;
        if (!popover.current?.contains(target) && !trigger.current?.contains(target)) setOpen(false);
      };
      document.addEventListener("pointerdown", outside);
      wasOpen.current = true;
      return () => document.removeEventListener("pointerdown", outside);
    }
    if (wasOpen.current) trigger.current?.focus();
    wasOpen.current = false;
    return undefined;
  }, [open, setOpen]);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.preventDefault();
      setOpen(false);
      return;
    }
    if (event.key !== "Tab" || !popover.current) return;
    const items = [...popover.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const first = items[0];
    const last = items.at(-1);
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };
  return { trigger, popover, onKeyDown };
}
