import { LIMIT_FIELDS, MODELS, type Settings, usdProblem } from "../settings.js";

interface Props {
  settings: Settings;
  onChange(next: Settings): void;
  onClose(): void;
}

/** Spending limits and model settings, sent with every request (docs/protocol.md, "Request"). */
export function SettingsPanel({ settings, onChange, onClose }: Props) {
  const set = <K extends keyof Settings>(key: K, value: Settings[K]) =>
    onChange({ ...settings, [key]: value });
  return (
    <aside className="settings" aria-label="Settings">
      <form onSubmit={(e) => e.preventDefault()}>
        <div className="settings-head">
          <h2>Settings</h2>
          <button type="button" className="link" onClick={onClose}>
            Close
          </button>
        </div>
        <fieldset>
          <legend>Spending limits (USD)</legend>
          <p className="muted small">
            Checked by the server before every signature; they can only tighten its own limits.
          </p>
          {LIMIT_FIELDS.map(([key, label, hint]) => {
            const problem = usdProblem(settings[key]);
            return (
              <label key={key} className="field">
                <span>{label}</span>
                <input
                  name={key}
                  inputMode="decimal"
                  value={settings[key]}
                  placeholder={key === "approvalAbove" ? "server default" : ""}
                  aria-invalid={problem !== undefined}
                  aria-describedby={`${key}-note`}
                  title={hint}
                  onChange={(e) => set(key, e.target.value)}
                />
                {problem ? (
                  <small className="field-error" id={`${key}-note`} data-testid={`${key}-error`}>
                    Not sent until fixed: {problem}
                  </small>
                ) : (
                  <small className="muted" id={`${key}-note`}>
                    {hint}
                  </small>
                )}
              </label>
            );
          })}
          <label className="field">
            <span>Networks</span>
            <input
              name="allowedNetworks"
              value={settings.allowedNetworks}
              placeholder="any the server allows"
              onChange={(e) => set("allowedNetworks", e.target.value)}
            />
            <small className="muted">CAIP-2 ids, comma-separated (eip155:8453, solana:…)</small>
          </label>
        </fieldset>
        <fieldset>
          <legend>Model</legend>
          <label className="field">
            <span>Model</span>
            <select name="model" value={settings.model} onChange={(e) => set("model", e.target.value)}>
              {MODELS.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>Temperature {settings.temperature.toFixed(1)}</span>
            <input
              name="temperature"
              type="range"
              min={0}
              max={1}
              step={0.1}
              value={settings.temperature}
              onChange={(e) => set("temperature", Number(e.target.value))}
            />
          </label>
          <label className="field">
            <span>Answer length</span>
            <select
              name="maxTokens"
              value={settings.maxTokens}
              onChange={(e) => set("maxTokens", Number(e.target.value))}
            >
              <option value={1000}>Brief (1000 tokens)</option>
              <option value={4000}>Detailed (4000 tokens)</option>
              <option value={8000}>Very comprehensive (8000 tokens)</option>
            </select>
          </label>
        </fieldset>
        <fieldset>
          <legend>Access</legend>
          <label className="field">
            <span>Bearer token</span>
            <input
              name="token"
              type="password"
              autoComplete="off"
              value={settings.token}
              placeholder="only if the server requires one"
              onChange={(e) => set("token", e.target.value)}
            />
            <small className="muted">Kept only while this page is open.</small>
          </label>
        </fieldset>
      </form>
    </aside>
  );
}
