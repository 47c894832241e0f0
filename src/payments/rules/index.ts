/**
 * Rules: the pure half of payments. What the limits are (`policy.ts`: limits, offers, signing
 * window), whether a quote may be paid (`admission.ts`), which status may follow which
 * (`state.ts`), the closed list of outcomes and their codes (`outcome.ts`), what the budget meter
 * shows (`budget.ts`) and what an unclear answer after sending means (`unclear.ts`). No I/O: every
 * function here answers from its arguments, so it can be tested without a ledger, a chain or a clock.
 */
export * from "./admission.js";
export * from "./budget.js";
export * from "./outcome.js";
export * from "./policy.js";
export * from "./state.js";
export * from "./unclear.js";
