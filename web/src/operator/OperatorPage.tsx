import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import { Brand } from "../components/TopBar.js";
import { useNow } from "../components/useNow.js";
import { ActivityTables } from "./ActivityTables.js";
import { OperatorApi } from "./api.js";
import { KeysSection } from "./KeysSection.js";
import { forgetToken, keepToken, readToken } from "./model.js";
import { PauseSection } from "./PauseSection.js";
import { useOperatorData } from "./useOperatorData.js";

/**
 * The operator page (`/operator`, docs/operator-page.md): behind the operator token, the keys,
 * the pause switch, recent payments, refusals and unclear payments, read again every few seconds
 * from the operator API (docs/deploy.md#operating-it). The token is kept in the tab's
 * sessionStorage only; "Sign out" forgets it.
 */
export function OperatorPage() {
  const [token, setToken] = useState(() => readToken(sessionStorage));
  const [notice, setNotice] = useState<string>();
  const signOut = (why?: string) => {
    forgetToken(sessionStorage);
    setToken(undefined);
    setNotice(why);
  };
  return (
    <div className="layout operator-layout">
      <header className="topbar">
        <Brand title="Operator" subtitle="Keys, the pause switch, and what payments did." />
        {token ? (
          <div className="topbar-actions">
            <button type="button" className="ghost" onClick={() => signOut("Signed out.")}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main className="operator-main">
        {token ? (
          <Console token={token} onUnauthorized={(message) => signOut(message)} />
        ) : (
          <SignIn
            notice={notice}
            onSignedIn={(t) => {
              keepToken(sessionStorage, t);
              setNotice(undefined);
              setToken(t);
            }}
          />
        )}
      </main>
    </div>
  );
}

/** Asks for the operator token and tries it (GET /api/operator/keys) before keeping it. */
function SignIn({ notice, onSignedIn }: { notice: string | undefined; onSignedIn(token: string): void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) {
      setError("Enter the operator token.");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await new OperatorApi(token).keys();
      onSignedIn(token);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
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

function Console({ token, onUnauthorized }: { token: string; onUnauthorized(message: string): void }) {
  const api = useMemo(() => new OperatorApi(token), [token]);
  const { data, errors, updatedAt, apply } = useOperatorData(api, onUnauthorized);
  const now = useNow(true);
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
      <KeysSection api={api} keys={data.keys} error={errors.keys} now={now} onChanged={() => apply({})} />
      <ActivityTables data={data} errors={errors} now={now} />
    </>
  );
}
