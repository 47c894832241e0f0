import { type FormEvent, useState } from "react";
import { type IssuedKey, KEY_SCOPES, type KeyScope, type OperatorApi } from "./api.js";
import {
  createKeyBody,
  EMPTY_KEY_FORM,
  type KeyForm,
  type KeyFormErrors,
  serverKeyFormErrors,
} from "./model.js";
import { useAction } from "./useAction.js";

interface Props {
  api: OperatorApi;
  onCreated(result: IssuedKey): void;
}

const SCOPE_WORDS: Record<KeyScope, string> = {
  chat: "chat (POST /api/chat)",
  mcp: "mcp (the MCP server)",
  history: "history (GET /api/payments)",
};

interface FieldProps {
  id: keyof KeyForm;
  label: string;
  hint: string;
  form: KeyForm;
  errors: KeyFormErrors;
  onChange(form: KeyForm): void;
  inputMode?: "decimal";
}

/** One text field with its hint, and its problem (tied to it by aria-describedby) when it has one. */
function Field({ id, label, hint, form, errors, onChange, inputMode }: FieldProps) {
  const error = errors[id];
  return (
    <label className="field">
      <span>{label}</span>
      <input
        name={id}
        value={String(form[id])}
        inputMode={inputMode}
        autoComplete="off"
        aria-invalid={error ? true : undefined}
        aria-describedby={`key-${id}-hint`}
        onChange={(e) => onChange({ ...form, [id]: e.target.value })}
      />
      <small id={`key-${id}-hint`} className={error ? "field-error" : "muted"}>
        {error ?? hint}
      </small>
    </label>
  );
}

/** Create a key: its name, caps (USD), wallets, expiry and scopes; the service answers with its token once. */
export function CreateKeyForm({ api, onCreated }: Props) {
  const [form, setForm] = useState<KeyForm>(EMPTY_KEY_FORM);
  const [errors, setErrors] = useState<KeyFormErrors>({});
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const read = createKeyBody(form);
    if ("errors" in read) {
      setErrors(read.errors);
      return;
    }
    setErrors({});
    const result = await action.run(() =>
      api.createKey(read.body).catch((error: unknown) => {
        // Said beside the fields it names too, not only under the form.
        setErrors(serverKeyFormErrors(error));
        throw error;
      }),
    );
    if (result) {
      setForm(EMPTY_KEY_FORM);
      onCreated(result);
    }
  };
  const toggle = (scope: KeyScope, on: boolean) =>
    setForm({ ...form, scopes: on ? [...form.scopes, scope] : form.scopes.filter((s) => s !== scope) });
  const props = { form, errors, onChange: setForm };
  return (
    <form
      className="op-form"
      aria-labelledby="create-key-heading"
      onSubmit={(e) => void submit(e)}
      noValidate
    >
      <h3 id="create-key-heading">Create a key</h3>
      <div className="op-form-grid">
        <Field id="name" label="Name" hint="Letters, digits and . _ - (64 at most); unique." {...props} />
        <Field
          id="perTransaction"
          label="Cap per payment (USD)"
          hint="Empty: the service's own."
          inputMode="decimal"
          {...props}
        />
        <Field
          id="perRequest"
          label="Cap per request (USD)"
          hint="Empty: the service's own."
          inputMode="decimal"
          {...props}
        />
        <Field
          id="daily"
          label="Cap per day (USD)"
          hint="Empty: the service's own."
          inputMode="decimal"
          {...props}
        />
        <Field
          id="wallets"
          label="Wallets"
          hint="Addresses, separated by commas; empty: any wallet."
          {...props}
        />
        <Field id="expiresIn" label="Expires in" hint="90m, 12h, 30d; empty: never." {...props} />
      </div>
      <fieldset className="op-scopes" aria-describedby="key-scopes-hint">
        <legend>Scopes</legend>
        {KEY_SCOPES.map((scope) => (
          <label key={scope} className="op-check">
            <input
              type="checkbox"
              name="scopes"
              value={scope}
              checked={form.scopes.includes(scope)}
              onChange={(e) => toggle(scope, e.target.checked)}
            />
            {SCOPE_WORDS[scope]}
          </label>
        ))}
        <small id="key-scopes-hint" className={errors.scopes ? "field-error" : "muted"}>
          {errors.scopes ?? "What the key may be used for."}
        </small>
      </fieldset>
      {action.error ? (
        <p className="card-error" role="alert">
          {action.error}
        </p>
      ) : null}
      <button type="submit" className="primary" disabled={action.busy}>
        Create key
      </button>
    </form>
  );
}
