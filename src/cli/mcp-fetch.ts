import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * The stdio bridge's fetch, wrapped (src/cli/mcp.ts): the dev token renewed after a devnet restart,
 * the 2026-07-28 revision's headers added from the body, and answer streams watched for a break.
 */

/**
 * Sends the newest token it knows; a 401 with a token that has changed since (the devnet
 * restarted: `BridgeOptions.renewToken`) is sent once more with the new one, and later requests
 * carry it.
 */
export function renewingToken(fetcher: FetchLike, renew: () => string | undefined): FetchLike {
  let current: string | undefined;
  const withToken = (init: RequestInit | undefined, token: string) => {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return { ...init, headers };
  };
  return async (url, init) => {
    const response = await fetcher(url, current ? withToken(init, current) : init);
    if (response.status !== 401) return response;
    const used = current ? `Bearer ${current}` : new Headers(init?.headers).get("authorization");
    const fresh = renew();
    if (!fresh || `Bearer ${fresh}` === used) return response;
    current = fresh;
    await response.body?.cancel().catch(() => {});
    return fetcher(url, withToken(init, fresh));
  };
}

const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";

/**
 * A 2026-07-28 message names its method (and tool, prompt or resource) in headers that must match
 * its body; the SDK's v1 transport the bridge posts with does not set them, so they are added here
 * from the body, for a message that carries that revision's `_meta` envelope (docs/mcp.md).
 */
export function withRevisionHeaders(fetcher: FetchLike): FetchLike {
  return (url, init) => {
    let message: { method?: unknown; params?: Record<string, unknown> } | undefined;
    try {
      message = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    } catch {}
    const meta = message?.params?._meta as Record<string, unknown> | undefined;
    const version = meta?.[PROTOCOL_VERSION_META];
    if (typeof version !== "string" || typeof message?.method !== "string") return fetcher(url, init);
    const headers = new Headers(init?.headers);
    headers.set("MCP-Protocol-Version", version);
    headers.set("Mcp-Method", message.method);
    const name = message.params?.name ?? message.params?.uri;
    if (typeof name === "string") headers.set("Mcp-Name", name);
    return fetcher(url, { ...init, headers });
  };
}

/** What a request whose answer stream ended without its answer is told (the service went away). */
export const BROKE_OFF =
  "the connection to the service broke off before its answer (did the service stop?). A payment under way may have gone through: read it with get_payment or list_payments before paying again.";

/**
 * Calls `unanswered(id)` when the event stream answering JSON-RPC request `id` ends or breaks
 * without having carried its answer: the SDK's transport then waits forever (it resumes only a
 * stream that gave event ids). Checked a moment after the end, once the SDK has read the stream.
 */
export function watchStreams(fetcher: FetchLike, unanswered: (id: string | number) => void): FetchLike {
  return async (url, init) => {
    const response = await fetcher(url, init);
    let id: unknown;
    try {
      id = typeof init?.body === "string" ? (JSON.parse(init.body) as { id?: unknown }).id : undefined;
    } catch {}
    const sse = response.headers.get("content-type")?.includes("text/event-stream");
    if ((typeof id !== "string" && typeof id !== "number") || !sse || !response.body) return response;
    const reader = response.body.getReader();
    const ended = () => setTimeout(() => unanswered(id), 250).unref();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            ended();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          ended();
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
