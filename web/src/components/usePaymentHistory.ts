import { useCallback, useEffect, useState } from "react";
import { ChatClient, type PaymentHistoryItem } from "../../../src/client/index.js";
import { describeError } from "../chat/transport.js";

/** Save text as a file the browser downloads (the CSV export needs the bearer header: no plain link). */
function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * The token's payments with this status filter (comma-separated statuses, "" for all), listed
 * again whenever either changes (a page from before would mix two filters); `more` appends the
 * next page. The list and the CSV export share the panel's one error line: the last failure.
 */
export function usePaymentHistory(token: string | undefined, filter: string) {
  const [items, setItems] = useState<PaymentHistoryItem[]>([]);
  const [next, setNext] = useState<string>();
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();

  const load = useCallback(
    async (cursor?: string) => {
      setLoading(true);
      setError(undefined);
      try {
        const client = new ChatClient(token ? { token } : {});
        const page = await client.listPayments({
          ...(filter ? { status: filter.split(",") } : {}),
          ...(cursor ? { cursor } : {}),
        });
        setItems((shown) => (cursor ? [...shown, ...page.items] : page.items));
        setNext(page.nextCursor);
      } catch (e) {
        setError(describeError(e));
      } finally {
        setLoading(false);
      }
    },
    [token, filter],
  );

  useEffect(() => {
    void load();
  }, [load]);

  const exportCsv = async () => {
    setError(undefined);
    const params = new URLSearchParams({ format: "csv", ...(filter ? { status: filter } : {}) });
    const response = await fetch(`/api/payments?${params}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    }).catch(() => undefined);
    if (!response?.ok) {
      setError(`The export failed${response ? ` (HTTP ${response.status})` : ""}.`);
      return;
    }
    download("payments.csv", await response.text());
  };

  const more = next ? () => void load(next) : undefined;
  return { items, more, loading, error, exportCsv };
}
