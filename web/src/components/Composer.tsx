import type { FormEvent } from "react";
import type { SettingsProblem } from "../settings.js";
import type { PageWallet } from "../wallet/types.js";

interface Props {
  input: string;
  onInput(text: string): void;
  wallet: PageWallet | undefined;
  busy: boolean;
  /** Limits the page cannot read: while there is one, nothing is sent (it would be dropped). */
  invalid: SettingsProblem[];
  settingsOpen: boolean;
  onOpenSettings(): void;
  onSend(text: string): void;
  onStop(): void;
  /** Offered once there is a conversation (and no turn runs). */
  onNewChat: (() => void) | undefined;
}

/** The question box, its buttons, and why nothing can be sent while a limit is unreadable. */
export function Composer({ input, onInput, wallet, busy, invalid, ...props }: Props) {
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    props.onSend(input);
  };
  return (
    <>
      {invalid.length > 0 ? (
        <div className="banner-error settings-invalid" role="alert" data-testid="settings-invalid">
          <p>Nothing is sent until this is fixed in Settings:</p>
          <ul>
            {invalid.map((p) => (
              <li key={p.field}>
                <strong>{p.label}</strong> “{p.value}”: {p.problem}
              </li>
            ))}
          </ul>
          {props.settingsOpen ? null : (
            <button type="button" className="link" onClick={props.onOpenSettings}>
              Open settings
            </button>
          )}
        </div>
      ) : null}

      <form className="composer" onSubmit={onSubmit}>
        <textarea
          name="question"
          rows={2}
          value={input}
          aria-label="Your question"
          placeholder={wallet ? `Ask something (paying from ${wallet.name})` : "Ask something"}
          onChange={(e) => onInput(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              props.onSend(input);
            }
          }}
        />
        {busy ? (
          <button type="button" onClick={props.onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!input.trim() || invalid.length > 0}>
            Send
          </button>
        )}
        {props.onNewChat ? (
          <button type="button" className="ghost" onClick={props.onNewChat}>
            New chat
          </button>
        ) : null}
      </form>
    </>
  );
}
