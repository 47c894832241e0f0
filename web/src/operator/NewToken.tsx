import { useEffect, useRef, useState } from "react";

interface Props {
  name: string;
  token: string;
  /** Rotated: the key's old token no longer works. */
  rotated: boolean;
  onDone(): void;
}

/**
 * A key's token, the one time the service shows it (on create and on rotate): a read-only field,
 * a Copy button and a warning. "Done" forgets it; the page never keeps it anywhere.
 */
export function NewToken({ name, token, rotated, onDone }: Props) {
  const [copied, setCopied] = useState<string>();
  const field = useRef<HTMLInputElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied("Copied.");
    } catch {
      field.current?.select();
      setCopied("Selected: press Ctrl+C (or ⌘C) to copy it.");
    }
  };
  return (
    <section className="op-new-token" aria-labelledby="new-token-heading" data-testid="new-token-box">
      <h3 id="new-token-heading" ref={heading} tabIndex={-1}>
        {rotated ? `New token for key ${name}` : `Token for the new key ${name}`}
      </h3>
      <p className="approval-warning">
        <strong>Copy it now: it is shown only this once</strong> and cannot be read again (rotate the key for
        a new one).{rotated ? " The key's old token has stopped working." : ""}
      </p>
      <div className="op-token-row">
        <label className="field">
          <span>Token</span>
          <input
            ref={field}
            readOnly
            value={token}
            data-testid="new-token"
            spellCheck={false}
            autoComplete="off"
            onFocus={(e) => e.currentTarget.select()}
          />
        </label>
        <button type="button" className="primary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" className="ghost" onClick={onDone}>
          Done
        </button>
      </div>
      <p className="small muted" role="status">
        {copied ?? ""}
      </p>
    </section>
  );
}
