/**
 * What the devnet is doing right now: how many `/verify` and `/settle` requests the facilitator is
 * still answering (a settlement holds its request until the chain has it, or a fault lets it go),
 * and how many requests the paid services are still answering (a paid one, until its settlement
 * is done). Read over the control server (`GET /__devnet/activity`) by tests that must leave the
 * devnet idle.
 */
export interface ActivitySnapshot {
  verifying: number;
  settling: number;
  serving: number;
}

export class Activity {
  private readonly counts: ActivitySnapshot = { verifying: 0, settling: 0, serving: 0 };

  /** Counts one request of `kind` until the returned function is called (once). */
  begin(kind: keyof ActivitySnapshot): () => void {
    this.counts[kind] += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.counts[kind] -= 1;
    };
  }

  snapshot(): ActivitySnapshot {
    return { ...this.counts };
  }
}

/** The facilitator's paths whose requests are counted. */
const COUNTED: Record<string, keyof ActivitySnapshot> = { "/verify": "verifying", "/settle": "settling" };

/**
 * `fetch` of an app, counting its requests until their answers are ready: every request as `all`
 * when given (the paid services), else the facilitator's `/verify` and `/settle`.
 */
export function countingFetch(
  fetch: (request: Request) => Response | Promise<Response>,
  activity: Activity,
  all?: keyof ActivitySnapshot,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const kind = all ?? COUNTED[new URL(request.url).pathname];
    const done = kind ? activity.begin(kind) : undefined;
    try {
      return await fetch(request);
    } finally {
      done?.();
    }
  };
}
