/**
 * Whether a piece of work waited out a timer: the load-proof form of "it took under N seconds"
 * for work that should end on events (a server closed, a process gone), not on a timeout.
 */
import { createHook } from "node:async_hooks";

/** Node's Timeout object, as an async hook sees it (`_idleTimeout`: its delay in ms). */
interface TimeoutResource {
  _idleTimeout?: number;
  _repeat?: number | null;
  hasRef?: () => boolean;
}

/**
 * Runs `work` and lists the delays of the timers it waited out: one-shot timers of at least
 * `minMs` armed while it ran that fired, holding the process open (ref'd), before it ended.
 * A timer armed and cleared, an interval, or an unref'd housekeeping tick (undici's) is not a
 * wait. Wall time is not measured at all, so a busy machine neither fails nor hides it.
 */
export async function timersWaitedOut<T>(
  work: () => Promise<T>,
  minMs = 100,
): Promise<{ value: T; waited: number[] }> {
  const armed = new Map<number, TimeoutResource>();
  const waited: number[] = [];
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type === "Timeout") armed.set(id, resource as TimeoutResource);
    },
    before(id) {
      const timer = armed.get(id);
      const delay = timer?._idleTimeout ?? 0;
      if (timer && delay >= minMs && timer._repeat == null && timer.hasRef?.() !== false) waited.push(delay);
    },
  });
  hook.enable();
  try {
    return { value: await work(), waited };
  } finally {
    hook.disable();
  }
}
