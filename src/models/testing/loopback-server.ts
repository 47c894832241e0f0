import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test support: a real HTTP server on 127.0.0.1, port 0, that plays a model provider. Each request is
 * recorded and answered by the next scripted reply, so tests drive the real `@ai-sdk/google` and
 * `@ai-sdk/openai-compatible` clients over the wire and then inspect what they sent.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface ScriptedReply {
  status?: number;
  contentType?: string;
  /** Raw body chunks, written one by one (an SSE stream is a list of `data: ...\n\n` events). */
  chunks: string[];
}

export interface LoopbackServer {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  requests: RecordedRequest[];
  /** Queue replies for the next requests, in order. */
  script(...replies: ScriptedReply[]): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedReply[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      const reply = queue.shift() ?? {
        status: 500,
        contentType: "application/json",
        chunks: ['{"error":"unscripted"}'],
      };
      res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "text/event-stream" });
      for (const chunk of reply.chunks) res.write(chunk);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** One SSE event per JSON payload. */
export function sse(...payloads: unknown[]): string[] {
  return payloads.map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`);
}
