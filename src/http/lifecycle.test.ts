import { describe, expect, it } from "vitest";
import type { AppError } from "../errors/index.js";
import { Lifecycle } from "./lifecycle.js";

/** Let every pending callback run (no clock involved). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("Lifecycle.drain", () => {
  it("waits for a turn that started after the drain began (a request already past its check)", async () => {
    const lifecycle = new Lifecycle();
    const first = lifecycle.track(() => {});
    let drained = false;
    const draining = lifecycle.drain(600_000, 0).then(() => {
      drained = true;
    });
    const second = lifecycle.track(() => {});
    first();
    await settle();
    expect(drained).toBe(false);
    second();
    await draining;
    expect(lifecycle.openTurns).toBe(0);
  });

  // Found by a black-box run (h41): a turn ended at the cutoff whose last store write never
  // answered (PostgreSQL frozen) held the drain until the process watchdog exited 1.
  it("gives up on a turn that does not finish once ended, as on work left running", async () => {
    const lifecycle = new Lifecycle();
    const stuck = lifecycle.track(() => {}); // ended, it never says it finished
    expect(await lifecycle.drain(0, 0)).toEqual({ abandoned: 1 });
    stuck();
  });

  it("ends a turn that starts once the grace period is over at once, with shutting_down", async () => {
    const lifecycle = new Lifecycle();
    const open = lifecycle.track(() => open());
    await lifecycle.drain(0, 0);
    const reasons: AppError[] = [];
    const late = lifecycle.track((reason) => reasons.push(reason));
    expect(reasons.map((reason) => reason.code)).toEqual(["shutting_down"]);
    late();
  });
});
