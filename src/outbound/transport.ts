import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";

/**
 * How the guarded fetch (safe-fetch.ts) talks to a server once a hop is admitted: node:http(s)
 * with the socket pinned to the checked addresses, or an injected `fetch` with manual redirects.
 * Bodies are read up to a byte bound.
 */

export interface PreparedRequest {
  method: string;
  headers: Headers;
  body: Uint8Array<ArrayBuffer> | null;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  read(maxBytes: number): Promise<{ body: Uint8Array; truncated: boolean }>;
  discard(): void;
}

export type Transport = (
  url: URL,
  request: PreparedRequest,
  pinned: string[],
  signal: AbortSignal,
) => Promise<RawResponse>;

/** Reads a byte stream up to `maxBytes`, then stops reading. */
async function collect(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  stop: () => void,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of chunks) {
    const room = maxBytes - size;
    if (chunk.byteLength > room) {
      if (room > 0) parts.push(chunk.subarray(0, room));
      size += Math.max(room, 0);
      truncated = true;
      stop();
      break;
    }
    parts.push(chunk);
    size += chunk.byteLength;
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  return { body, truncated };
}

/** The default transport: node:http(s), the socket pinned to the checked addresses. */
export function nodeTransport(): Transport {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, timeout: 30_000 }),
    "https:": new https.Agent({ keepAlive: true, timeout: 30_000 }),
  };
  return (url, request, pinned, signal) =>
    new Promise<RawResponse>((resolve, reject) => {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      // Node does not decompress; ask for identity so the bytes we cap are the bytes we return.
      headers["accept-encoding"] = "identity";
      if (request.body) headers["content-length"] = String(request.body.byteLength);
      const isHttps = url.protocol === "https:";
      const options: https.RequestOptions = {
        method: request.method,
        headers,
        signal,
        agent: isHttps ? agents["https:"] : agents["http:"],
      };
      options.lookup = pinnedLookup(pinned);
      const req = (isHttps ? https : http).request(url, options, (res) => {
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          responseHeaders.append(res.rawHeaders[i] ?? "", res.rawHeaders[i + 1] ?? "");
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: responseHeaders,
          read: (maxBytes) => collect(res, maxBytes, () => res.destroy()),
          discard: () => res.destroy(),
        });
      });
      req.on("error", reject);
      req.end(request.body ?? undefined);
    });
}

/** A `lookup` for net.connect that answers only with addresses already checked. */
function pinnedLookup(addresses: string[]): NonNullable<http.RequestOptions["lookup"]> {
  const entries: LookupAddress[] = addresses.map((address) => ({
    address,
    family: isIP(address) === 6 ? 6 : 4,
  }));
  return ((
    _host: string,
    options: { all?: boolean; family?: number | string },
    callback: (...args: unknown[]) => void,
  ) => {
    const wanted =
      options.family === 4 || options.family === 6
        ? entries.filter((e) => e.family === options.family)
        : entries;
    const list = wanted.length > 0 ? wanted : entries;
    if (options.all) callback(null, list);
    else callback(null, list[0]?.address, list[0]?.family);
  }) as NonNullable<http.RequestOptions["lookup"]>;
}

/** An injected `fetch` as transport: redirects stay manual so every hop comes back here. */
export function fetchTransport(fetchImpl: typeof fetch): Transport {
  return async (url, request, _pinned, signal) => {
    const response = await fetchImpl(url.href, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal,
    });
    const stream = response.body;
    return {
      status: response.status,
      headers: response.headers,
      read: async (maxBytes) => {
        if (!stream) return { body: new Uint8Array(0), truncated: false };
        const reader = stream.getReader();
        const chunks: AsyncIterable<Uint8Array> = {
          async *[Symbol.asyncIterator]() {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              yield value;
            }
          },
        };
        return collect(chunks, maxBytes, () => {
          reader.cancel().catch(() => {});
        });
      },
      discard: () => {
        stream?.cancel().catch(() => {});
      },
    };
  };
}
