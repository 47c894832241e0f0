import type { Faults } from "./types.js";

/** All switches off: the devnet behaves like a healthy network. */
export const NO_FAULTS: Readonly<Faults> = Object.freeze({
  serviceDown: null,
  facilitatorDown: null,
  settleDelayMs: 0,
  settleFail: false,
  settleHangAfterChain: false,
  settleLate: false,
  requoteMultiplier: null,
});

/**
 * The mutable fault state shared by the facilitator and the services, with change listeners
 * so listeners can close or reopen sockets when `serviceDown`/`facilitatorDown` flip.
 */
export class FaultSwitch {
  private state: Faults = { ...NO_FAULTS };
  private readonly listeners = new Set<(next: Faults, prev: Faults) => void>();

  get(): Faults {
    return {
      ...this.state,
      serviceDown: Array.isArray(this.state.serviceDown)
        ? [...this.state.serviceDown]
        : this.state.serviceDown,
    };
  }

  /** Merges `patch` into the current state after validating it; throws on a bad value. */
  set(patch: Partial<Faults>): void {
    const next = { ...this.state, ...validateFaults(patch) };
    const prev = this.state;
    this.state = next;
    for (const listener of this.listeners) listener(next, prev);
  }

  reset(): void {
    this.set({ ...NO_FAULTS });
  }

  onChange(listener: (next: Faults, prev: Faults) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the service `id` should answer 503 right now. */
  serviceAnswers503(id: string): boolean {
    const down = this.state.serviceDown;
    return down === "503" || (Array.isArray(down) && down.includes(id));
  }
}

/** Checks an untrusted patch (e.g. from the HTTP control endpoint) and returns the known keys. */
export function validateFaults(input: unknown): Partial<Faults> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new TypeError("faults must be an object");
  }
  const raw = input as Record<string, unknown>;
  const out: Partial<Faults> = {};
  for (const key of Object.keys(raw)) {
    if (!(key in NO_FAULTS)) throw new TypeError(`unknown fault "${key}"`);
  }
  if ("serviceDown" in raw) {
    const v = raw.serviceDown;
    if (v === null || v === "refuse" || v === "503") out.serviceDown = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === "string")) out.serviceDown = [...v];
    else throw new TypeError('serviceDown must be null, "refuse", "503" or an array of service ids');
  }
  if ("facilitatorDown" in raw) {
    const v = raw.facilitatorDown;
    if (v === null || v === "refuse" || v === "503") out.facilitatorDown = v;
    else throw new TypeError('facilitatorDown must be null, "refuse" or "503"');
  }
  if ("settleDelayMs" in raw) {
    const v = raw.settleDelayMs;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 600_000) {
      throw new TypeError("settleDelayMs must be a number of milliseconds between 0 and 600000");
    }
    out.settleDelayMs = v;
  }
  for (const key of ["settleFail", "settleHangAfterChain", "settleLate"] as const) {
    if (key in raw) {
      if (typeof raw[key] !== "boolean") throw new TypeError(`${key} must be a boolean`);
      out[key] = raw[key];
    }
  }
  if ("requoteMultiplier" in raw) {
    const v = raw.requoteMultiplier;
    if (v !== null && (typeof v !== "number" || !Number.isFinite(v) || v <= 0)) {
      throw new TypeError("requoteMultiplier must be null or a positive number");
    }
    out.requoteMultiplier = v;
  }
  return out;
}
