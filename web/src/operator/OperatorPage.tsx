import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import { Brand } from "../components/TopBar.js";
import { useNow } from "../components/useNow.js";
import { useDevnet } from "../wallet/useDevnet.js";
import { ActivityTables } from "./ActivityTables.js";
import { OPERATOR_NAME, OperatorApi, OperatorApiError } from "./api.js";
import { KeysSection } from "./KeysSection.js";
import { forgetSession, keepSession, type OperatorSession, readSession, splitPauses } from "./model.js";
import { PauseSection } from "./PauseSection.js";
import { useOperatorData } from "./useOperatorData.js";

/**
 * The operator page (`/operator`, docs/operator-page.md): behind the operator token, the keys,
 * the pause switch, recent payments, refusals and unclear payments, read again every few seconds
 * from the operator API (docs/deploy.md#operating-it). The token is kept in the tab's
 * sessionStorage only; "Sign out" forgets it.
 */
export function OperatorPage() {
  const [session, setSession] = useState(() => readSession(sessionStorage));
  const [notice, setNotice] = useState<string>();
  const signOut = (why?: string) => {
    forgetSession(sessionStorage);
    setSession(undefined);
    setNotice(why);
  };
  return (
    <div className="layout operator-layout">
      <header className="topbar">
        <Brand title="Operator" subtitle="Keys, the pause switch, and what payments did." />
        {session ? (
          <div className="topbar-actions">
            {session.name ? <span className="muted small">Signed in as {session.name}</span> : null}
            <button type="button" className="ghost" onClick={() => signOut("Signed out.")}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main className="operator-main">
        {session ? (
          <Console
            session={session}
            onUnauthorized={() => signOut("The service no longer takes this operator token: sign in again.")}
          />
        ) : (
          <SignIn
            notice={notice}
            onSignedIn={(signedIn) => {
              keepSession(sessionStorage, signedIn);
              setNotice(undefined);
              setSession(signedIn);
            }}
          />
        )}
      </main>
    </div>
  );
}

/**
 * Asks for the operator token (and, for the audit trail, a name) and tries it (GET
 * /api/operator/keys) before keeping it.
 */
function SignIn({
  notice,
  onSignedIn,
}: {
  notice: string | undefined;
  onSignedIn(session: OperatorSession): void;
}) {
  const [value, setValue] = useState("");
  const [name, setName] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const token = value.trim();
    const operator = name.trim();
    if (!token) {
      setError("Enter the operator token.");
      return;
    }
    if (operator && !OPERATOR_NAME.test(operator)) {
      setError("Your name may have letters, digits, spaces and . @ _ - (64 at most).");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await new OperatorApi(token).keys();
      onSignedIn(operator ? { token, name: operator } : { token });
    } catch (e) {
      setError(
        e instanceof OperatorApiError && e.status === 401
          ? "The service refused this operator token."
          : e instanceof Error
            ? e.message
            : String(e),
      );
      setBusy(false);
    }
  };
  return (
    <section className="operator-card operator-signin" aria-labelledby="signin-heading">
      <h2 id="signin-heading">Sign in</h2>
      <p className="muted small">
        The operator token is the service's <code>OPERATOR_TOKEN</code> (or, when it is unset, the file{" "}
        <code>operator-token</code> in its data directory). This tab keeps it until you sign out or close it.
      </p>
      {notice ? (
        <p className="muted" role="status">
          {notice}
        </p>
      ) : null}
      <form onSubmit={(e) => void submit(e)}>
        <label className="field">
          <span>Operator token</span>
          <input
            ref={input}
            type="password"
            name="operatorToken"
            autoComplete="off"
            value={value}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "signin-error" : undefined}
            onChange={(e) => setValue(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Your name (optional)</span>
          <input
            name="operatorName"
            autoComplete="name"
            maxLength={64}
            value={name}
            aria-describedby="operator-name-hint"
            onChange={(e) => setName(e.target.value)}
          />
          <small id="operator-name-hint" className="muted">
            Recorded as who made each change (the audit trail).
          </small>
        </label>
        {error ? (
          <p className="card-error" id="signin-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </section>
  );
}

function Console({
  session,
  onUnauthorized,
}: {
  session: OperatorSession;
  onUnauthorized(message: string): void;
}) {
  const { token, name } = session;
  const api = useMemo(() => new OperatorApi(token, { operator: name }), [token, name]);
  const { data, errors, updatedAt, apply } = useOperatorData(api, onUnauthorized);
  const now = useNow(true);
  const { localNetworks } = useDevnet();
  // Signed in: the focus goes from the gone form to the first section, the switch.
  useEffect(() => document.getElementById("pause-heading")?.focus(), []);
  const pausedKeys = new Set(splitPauses(data.pauses ?? []).keys.flatMap((p) => (p.key ? [p.key] : [])));
  return (
    <>
      <p className="muted small operator-updated">
        {updatedAt
          ? `Read at ${new Date(updatedAt).toLocaleTimeString()}; read again every few seconds.`
          : "Reading…"}
      </p>
      <PauseSection
        api={api}
        pauses={data.pauses}
        keys={data.keys}
        error={errors.pauses}
        onPauses={(pauses) => apply({ pauses })}
      />
      <KeysSection
        api={api}
        keys={data.keys}
        paused={pausedKeys}
        error={errors.keys}
        now={now}
        onChanged={() => apply({})}
      />
      <ActivityTables data={data} errors={errors} now={now} localNetworks={localNetworks} />
    </>
  );
}
