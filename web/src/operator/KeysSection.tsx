import { useEffect, useRef, useState } from "react";
import { shortHash, usd } from "../format.js";
import type { IssuedKey, KeyView, OperatorApi } from "./api.js";
import { CreateKeyForm } from "./CreateKeyForm.js";
import { limitsText, when } from "./model.js";
import { NewToken } from "./NewToken.js";
import { useAction } from "./useAction.js";

interface Props {
  api: OperatorApi;
  keys: KeyView[] | undefined;
  /** Names of the keys paused one by one. */
  paused: ReadonlySet<string>;
  error: string | undefined;
  now: number;
  /** A key was created, revoked or rotated: read the list again. */
  onChanged(): void;
}

const STATUS_TONE: Record<KeyView["status"], string> = { active: "ok", revoked: "bad", expired: "neutral" };

/** The keys: a table with each key's scopes, wallets, caps, last 24 hours' spend and expiry; create, rotate, revoke. */
export function KeysSection({ api, keys, paused, error, now, onChanged }: Props) {
  const [issued, setIssued] = useState<{ token: string; name: string; rotated: boolean }>();
  /** The key whose revoke or rotate waits for "Yes" (each ends its token at once: h52). */
  const [confirming, setConfirming] = useState<{ name: string; what: Change }>();
  const action = useAction();
  const show = (result: IssuedKey | undefined, rotated: boolean) => {
    if (!result) return;
    setIssued({ token: result.token, name: result.key.name, rotated });
    onChanged();
  };
  const revoke = async (name: string) => {
    if (await action.run(() => api.revokeKey(name))) {
      setConfirming(undefined);
      onChanged();
    }
  };
  const rotate = async (name: string) => {
    const rotated = await action.run(() => api.rotateKey(name));
    if (rotated) setConfirming(undefined);
    show(rotated, true);
  };
  return (
    <section className="operator-card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      {error ? (
        <p className="card-error" role="alert">
          {error}
        </p>
      ) : null}
      {issued ? (
        <NewToken
          name={issued.name}
          token={issued.token}
          rotated={issued.rotated}
          onDone={() => setIssued(undefined)}
        />
      ) : null}
      {action.error ? (
        <p className="card-error" role="alert">
          {action.error}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="op-table" data-testid="keys-table">
          <caption>API keys: their caps and what each spent in the last 24 hours</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Scopes</th>
              <th scope="col">Wallets</th>
              <th scope="col">Limits</th>
              <th scope="col" className="num">
                Spent (24 h)
              </th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys?.length === 0 ? (
              <tr>
                <td colSpan={8} className="muted">
                  No keys yet: create one below.
                </td>
              </tr>
            ) : null}
            {keys?.map((key) => (
              <KeyRow
                key={key.name}
                view={key}
                paused={paused.has(key.name)}
                now={now}
                busy={action.busy}
                confirming={confirming?.name === key.name ? confirming.what : undefined}
                onAsk={(what) => setConfirming({ name: key.name, what })}
                onCancel={() => setConfirming(undefined)}
                onRevoke={() => void revoke(key.name)}
                onRotate={() => void rotate(key.name)}
              />
            ))}
          </tbody>
        </table>
      </div>
      <CreateKeyForm api={api} onCreated={(result) => show(result, false)} />
    </section>
  );
}

type Change = "revoke" | "rotate";

interface RowProps {
  view: KeyView;
  paused: boolean;
  now: number;
  busy: boolean;
  confirming: Change | undefined;
  onAsk(what: Change): void;
  onCancel(): void;
  onRevoke(): void;
  onRotate(): void;
}

function expiryText(view: KeyView, now: number): string {
  if (view.status === "revoked") return `revoked ${when(view.revokedAt)}`;
  if (!view.expiresAt) return "never";
  return `${Date.parse(view.expiresAt) <= now ? "expired" : ""} ${when(view.expiresAt)}`.trim();
}

function KeyRow({ view, paused, now, busy, confirming, onAsk, onCancel, onRevoke, onRotate }: RowProps) {
  const asked = { revoke: useRef<HTMLButtonElement>(null), rotate: useRef<HTMLButtonElement>(null) };
  const wasConfirming = useRef(confirming);
  useEffect(() => {
    // Back from "Revoke it?" or "Rotate it?" (Cancel): the focus returns to the button that asked.
    const was = wasConfirming.current;
    if (was && !confirming) asked[was].current?.focus();
    wasConfirming.current = confirming;
  });
  return (
    <tr data-testid="key-row" data-key={view.name} data-status={view.status}>
      <th scope="row">{view.name}</th>
      <td>
        <span className={`status status-${STATUS_TONE[view.status]}`}>{view.status}</span>
        {paused ? <span className="status status-wait">paused</span> : null}
      </td>
      <td>{view.scopes.join(", ")}</td>
      <td>
        {view.wallets === null
          ? "any"
          : view.wallets.map((w) => (
              <code key={w} title={w} className="op-wallet">
                {shortHash(w)}
              </code>
            ))}
      </td>
      <td>{limitsText(view.limits)}</td>
      <td className="num">{usd(view.spentTodayUsd)}</td>
      <td>{expiryText(view, now)}</td>
      <td>
        {view.status !== "active" ? null : confirming ? (
          <ChangeConfirm
            name={view.name}
            what={confirming}
            busy={busy}
            onYes={confirming === "revoke" ? onRevoke : onRotate}
            onCancel={onCancel}
          />
        ) : (
          <div className="op-actions">
            <button
              ref={asked.rotate}
              type="button"
              className="ghost"
              disabled={busy}
              onClick={() => onAsk("rotate")}
            >
              Rotate<span className="visually-hidden"> {view.name}</span>
            </button>
            <button
              ref={asked.revoke}
              type="button"
              className="ghost danger"
              disabled={busy}
              onClick={() => onAsk("revoke")}
            >
              Revoke<span className="visually-hidden"> {view.name}</span>
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}

const CHANGE_WORDS: Record<Change, string> = {
  revoke: "Its token stops working at once.",
  rotate: "A new token is made, and the old one stops working at once.",
};

/** "Revoke it?" or "Rotate it?" in the row itself: the confirming button takes the focus; Cancel gives it back. */
function ChangeConfirm({
  name,
  what,
  busy,
  onYes,
  onCancel,
}: {
  name: string;
  what: Change;
  busy: boolean;
  onYes(): void;
  onCancel(): void;
}) {
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => confirm.current?.focus(), []);
  return (
    <fieldset className="op-confirm">
      <legend className="visually-hidden">
        {what === "revoke" ? "Revoke" : "Rotate"} key {name}?
      </legend>
      <span className="small">{CHANGE_WORDS[what]}</span>
      <button ref={confirm} type="button" className="danger" disabled={busy} onClick={onYes}>
        Yes, {what} {name}
      </button>
      <button type="button" className="ghost" onClick={onCancel}>
        Cancel
      </button>
    </fieldset>
  );
}
