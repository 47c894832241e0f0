import { useCallback, useEffect, useRef, useState } from "react";
import {
  type KeyView,
  type OperatorApi,
  OperatorApiError,
  type OperatorPayment,
  type Pause,
  type Refusal,
} from "./api.js";

/** How often the page reads everything again. */
export const POLL_MS = 5000;

export interface OperatorData {
  keys?: KeyView[];
  pauses?: Pause[];
  payments?: OperatorPayment[];
  unclear?: OperatorPayment[];
  refusals?: Refusal[];
}

export type Section = keyof OperatorData;
export type SectionErrors = Partial<Record<Section, string>>;

const READS: Array<[Section, (api: OperatorApi) => Promise<OperatorData[Section]>]> = [
  ["keys", (api) => api.keys()],
  ["pauses", (api) => api.pauses()],
  ["payments", (api) => api.payments()],
  ["unclear", (api) => api.unclear()],
  ["refusals", (api) => api.refusals()],
];

function sentence(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Each section's answer, or its error as a sentence; the first 401 if any section had one. */
async function readAll(api: OperatorApi) {
  const results = await Promise.allSettled(READS.map(([, read]) => read(api)));
  const data: OperatorData = {};
  const errors: SectionErrors = {};
  let refused: string | undefined;
  results.forEach((result, i) => {
    const section = READS[i]?.[0];
    if (!section) return;
    if (result.status === "fulfilled") Object.assign(data, { [section]: result.value });
    else {
      errors[section] = sentence(result.reason);
      if (result.reason instanceof OperatorApiError && result.reason.status === 401)
        refused ??= errors[section];
    }
  });
  return { data, errors, refused };
}

/**
 * Everything the page shows, read now and every {@link POLL_MS} (one read at a time: a slow
 * service is not asked again before it answers). Each section keeps its last good answer and its
 * own error; a 401 anywhere means the token no longer works (`onUnauthorized`). `apply` puts an
 * action's answer on the page at once (the pauses a pause returns) and reads everything again; a
 * read that was under way when it came is dropped, as it may predate the action.
 */
export function useOperatorData(api: OperatorApi, onUnauthorized: (message: string) => void) {
  const [data, setData] = useState<OperatorData>({});
  const [errors, setErrors] = useState<SectionErrors>({});
  const [updatedAt, setUpdatedAt] = useState<number>();
  const busy = useRef(false);
  const again = useRef(false);
  const generation = useRef(0);
  const unauthorized = useRef(onUnauthorized);
  unauthorized.current = onUnauthorized;

  const refresh = useCallback(async () => {
    if (busy.current) {
      again.current = true;
      return;
    }
    busy.current = true;
    try {
      do {
        again.current = false;
        const started = generation.current;
        const read = await readAll(api);
        if (read.refused !== undefined) {
          unauthorized.current(read.refused);
          return;
        }
        if (started !== generation.current) continue;
        setData((shown) => ({ ...shown, ...read.data }));
        setErrors(read.errors);
        setUpdatedAt(Date.now());
      } while (again.current);
    } finally {
      busy.current = false;
    }
  }, [api]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  const apply = useCallback(
    (part: OperatorData) => {
      generation.current += 1;
      setData((shown) => ({ ...shown, ...part }));
      void refresh();
    },
    [refresh],
  );

  return { data, errors, updatedAt, refresh, apply };
}
