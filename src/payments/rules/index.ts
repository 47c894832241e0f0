/**
 * Rules: the pure half of payments. What the limits are and whether an amount fits them
 * (`limits.ts`), which offer may be paid and its signing window (`offers.ts`), whether a quote may
 * be paid and who pays it (`admission.ts`), whether a stored approval still fits the limits
 * (`approval.ts`), which status may follow which (`state.ts`), the closed list of outcomes and
 * their codes (`outcome.ts`), what the budget meter shows (`budget.ts`) and what an unclear answer
 * after sending means (`unclear.ts`). No I/O: every function here answers from its arguments, so it
 * can be tested without a ledger, a chain or a clock.
 */
export * from "./admission.js";
export * from "./answer-limits.js";
export * from "./approval.js";
export * from "./budget.js";
export * from "./limits.js";
export * from "./offers.js";
export * from "./outcome.js";
export * from "./state.js";
export * from "./unclear.js";
