import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from "react";

interface Props {
  title: string;
  className: string;
  onClose(): void;
  children: ReactNode;
  testId?: string;
}

/**
 * A side panel beside the chat (Settings, Payments): not modal, so focus is not trapped. Opening
 * it moves focus to its heading, so a screen reader says where one is; Escape inside it closes it;
 * closing it returns focus to what had it before (the top bar's button that opened it).
 */
export function SidePanel({ title, className, onClose, children, testId }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Read at the first render, before any panel's effects move focus: the control that opened it.
  const [before] = useState(() =>
    document.activeElement instanceof HTMLElement ? document.activeElement : null,
  );
  useEffect(() => {
    heading.current?.focus();
    return () => {
      if (before?.isConnected) before.focus();
    };
  }, [before]);
  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (event.key !== "Escape" || event.defaultPrevented) return;
    event.preventDefault();
    onClose();
  };
  return (
    <aside className={className} aria-label={title} data-testid={testId} onKeyDown={onKeyDown}>
      <div className="settings-head">
        <h2 ref={heading} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" className="link" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </aside>
  );
}
