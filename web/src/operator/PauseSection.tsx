import { type FormEvent, useState } from "react";
import type { KeyView, OperatorApi, Pause, PauseTarget } from "./api.js";
import { splitPauses, when } from "./model.js";
import { useAction } from "./useAction.js";

interface Props {
  api: OperatorApi;
  pauses: Pause[] | undefined;
  keys: KeyView[] | undefined;
  error: string | undefined;
  /** The pauses as the service answered a pause or resume. */
  onPauses(pauses: Pause[]): void;
}

const ALL = "";

/**
 * The pause switch: whether payments are paused (all of them, or some keys'), why, since when and
 * by whom; pausing takes a reason, which refusals then carry (`payments_paused`). Signed payments
 * finish either way (docs/deploy.md#operating-it).
 */
export function PauseSection({ api, pauses, keys, error, onPauses }: Props) {
  const [chosen, setTarget] = useState(ALL);
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string>();
  const action = useAction();
  const { all, keys: pausedKeys } = splitPauses(pauses ?? []);
  const activeKeys = (keys ?? []).filter((k) => k.status === "active");
  // A key chosen, then revoked or expired: back to all payments.
  const target = activeKeys.some((k) => k.name === chosen) ? chosen : ALL;
  const act = async (run: () => Promise<Pause[]>) => {
    const answer = await action.run(run);
    if (answer) onPauses(answer);
    return answer !== undefined;
  };
  const pause = async (event: FormEvent) => {
    event.preventDefault();
    if (!reason.trim()) {
      setReasonError("Say why: the reason goes with every payment refused while paused.");
      return;
    }
    setReasonError(undefined);
    const to: PauseTarget = target === ALL ? { all: true } : { key: target };
    if (await act(() => api.pause(to, reason.trim()))) setReason("");
  };
  return (
    <section className="operator-card" aria-labelledby="pause-heading">
      <h2 id="pause-heading" tabIndex={-1}>
        Pause switch
      </h2>
      {error ? (
        <p className="card-error" role="alert">
          {error}
        </p>
      ) : null}
      <PauseState all={all} known={pauses !== undefined} />
      {all ? (
        <button
          type="button"
          className="primary"
          disabled={action.busy}
          onClick={() => void act(() => api.resume({ all: true }))}
        >
          Resume all payments
        </button>
      ) : null}
      {pausedKeys.length > 0 ? (
        <>
          <h3 id="paused-keys-heading">Paused keys</h3>
          <ul className="op-paused-keys" aria-labelledby="paused-keys-heading">
            {pausedKeys.map((p) => (
              <li key={p.key} data-testid="paused-key" data-key={p.key}>
                <strong>{p.key}</strong>: “{p.reason}”, since {when(p.since)} by {p.by}{" "}
                <button
                  type="button"
                  className="ghost"
                  disabled={action.busy}
                  onClick={() => void act(() => api.resume({ key: p.key ?? "" }))}
                >
                  Resume {p.key}
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <form className="op-pause-form" onSubmit={(e) => void pause(e)} noValidate>
        <div className="field">
          {/* Its own label (not around the select): a wrapped select adds its option to the name. */}
          <label htmlFor="pause-target">What to pause</label>
          <select
            id="pause-target"
            name="pauseTarget"
            value={target}
            onChange={(e) => setTarget(e.target.value)}
          >
            <option value={ALL}>All payments</option>
            {activeKeys.map((k) => (
              <option key={k.name} value={k.name}>
                Key {k.name}
              </option>
            ))}
          </select>
        </div>
        <label className="field op-reason">
          <span>Reason</span>
          <input
            name="pauseReason"
            value={reason}
            maxLength={500}
            autoComplete="off"
            aria-invalid={reasonError ? true : undefined}
            aria-describedby="pause-reason-hint"
            onChange={(e) => setReason(e.target.value)}
          />
          <small id="pause-reason-hint" className={reasonError ? "field-error" : "muted"}>
            {reasonError ?? "Shown in every refusal while paused."}
          </small>
        </label>
        <button type="submit" className="danger op-pause-submit" disabled={action.busy}>
          {target !== ALL ? `Pause key ${target}` : all ? "Change the reason" : "Pause all payments"}
        </button>
      </form>
      {action.error ? (
        <p className="card-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </section>
  );
}

function PauseState({ all, known }: { all: Pause | undefined; known: boolean }) {
  if (!known) return <p className="muted">Reading the pause switch…</p>;
  return (
    <p
      className={`op-pause-state ${all ? "op-paused" : "op-running"}`}
      role="status"
      data-testid="pause-state"
      data-paused={all ? "all" : "none"}
    >
      {all ? (
        <>
          <strong>All payments are paused</strong>: “{all.reason}”, since {when(all.since)} by {all.by}.
          Nothing is signed until you resume; payments already signed finish.
        </>
      ) : (
        <strong>Payments are running.</strong>
      )}
    </p>
  );
}
