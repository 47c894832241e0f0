import { LIMITS_RULE } from "../../../src/protocol/limits-rule.js";
import {
  LIMIT_FIELDS,
  type LimitField,
  MODELS,
  networksProblem,
  type Settings,
  usdProblem,
} from "../settings.js";
import { SidePanel } from "./SidePanel.js";

interface Props {
  settings: Settings;
  onChange(next: Settings): void;
  onClose(): void;
}

/** One setting changed, the others kept: each field of the panel edits through it. */
type SetSetting = <K extends keyof Settings>(key: K, value: Settings[K]) => void;

interface FieldsProps {
  settings: Settings;
  set: SetSetting;
}

/** Spending limits and model settings, sent with every request (docs/protocol.md, "Request"). */
export function SettingsPanel({ settings, onChange, onClose }: Props) {
  const set: SetSetting = (key, value) => onChange({ ...settings, [key]: value });
  return (
    <SidePanel title="Settings" className="settings" onClose={onClose}>
      <form onSubmit={(e) => e.preventDefault()}>
        <LimitFields settings={settings} set={set} />
        <ModelFields settings={settings} set={set} />
        <AccessFields settings={settings} set={set} />
      </form>
    </SidePanel>
  );
}

function LimitFields({ settings, set }: FieldsProps) {
  return (
    <fieldset>
      <legend>Spending limits (USD)</legend>
      <p className="muted small">Checked by the server before every signature. {LIMITS_RULE}</p>
      {LIMIT_FIELDS.map(([key, label, hint]) => (
        <LimitInput
          key={key}
          name={key}
          label={label}
          hint={hint}
          value={settings[key]}
          onChange={(value) => set(key, value)}
        />
      ))}
      <NetworksInput value={settings.allowedNetworks} onChange={(value) => set("allowedNetworks", value)} />
    </fieldset>
  );
}

interface LimitInputProps {
  name: LimitField;
  label: string;
  hint: string;
  value: string;
  onChange(value: string): void;
}

/**
 * A limit as typed, kept even when unreadable: the note under it says why it is not sent (the
 * request would silently fall back to the server's limit otherwise).
 */
function LimitInput({ name, label, hint, value, onChange }: LimitInputProps) {
  const problem = usdProblem(value);
  return (
    <label className="field">
      <span>{label}</span>
      <input
        name={name}
        inputMode="decimal"
        value={value}
        placeholder={name === "approvalAbove" ? "server default" : ""}
        aria-invalid={problem !== undefined}
        aria-describedby={`${name}-note`}
        title={hint}
        onChange={(e) => onChange(e.target.value)}
      />
      {problem ? (
        <small className="field-error" id={`${name}-note`} data-testid={`${name}-error`}>
          Not sent until fixed: {problem}
        </small>
      ) : (
        <small className="muted" id={`${name}-note`}>
          {hint}
        </small>
      )}
    </label>
  );
}

/** The networks a payment may use: a list the page checks, so a typo is never sent as no list. */
function NetworksInput({ value, onChange }: { value: string; onChange(value: string): void }) {
  const problem = networksProblem(value);
  return (
    <label className="field">
      <span>Networks</span>
      <input
        name="allowedNetworks"
        value={value}
        placeholder="any the server allows"
        aria-invalid={problem !== undefined}
        aria-describedby="allowedNetworks-note"
        onChange={(e) => onChange(e.target.value)}
      />
      {problem ? (
        <small className="field-error" id="allowedNetworks-note" data-testid="allowedNetworks-error">
          Not sent until fixed: {problem}
        </small>
      ) : (
        <small className="muted" id="allowedNetworks-note">
          CAIP-2 ids, comma-separated (eip155:8453, solana:…)
        </small>
      )}
    </label>
  );
}

function ModelFields({ settings, set }: FieldsProps) {
  const hint = MODELS.find((m) => m.id === settings.model)?.hint;
  return (
    <fieldset>
      <legend>Model</legend>
      <label className="field">
        <span>Model</span>
        {/* The name alone in the box (it fits the panel); what it is for is said under it. */}
        <select
          name="model"
          value={settings.model}
          aria-describedby="model-note"
          onChange={(e) => set("model", e.target.value)}
        >
          {MODELS.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
        <small className="muted" id="model-note" data-testid="model-hint">
          {hint ?? "a model this page does not know"}
        </small>
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
  );
}

function AccessFields({ settings, set }: FieldsProps) {
  return (
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
  );
}
