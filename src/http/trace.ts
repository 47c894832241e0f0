import type { Tracer } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { startRequestSpan } from "../observe/index.js";

/**
 * A span around one request (docs/deploy.md#traces-and-metrics): the chat turn (`chat.turn`), an
 * MCP request (`mcp.request`). Everything the request runs, its payments and the model's steps
 * included, is a child; the span ends when the answer's body has been sent (a stream: its last
 * line) or given up by the client.
 */
export function traceRequest(tracer: Tracer, name: string): MiddlewareHandler {
  return async (c, next) => {
    const span = startRequestSpan(tracer, name, {
      "http.request.method": c.req.method,
      "http.route": c.req.routePath,
    });
    try {
      await span.run(next);
    } catch (error) {
      span.end(500, error instanceof Error ? error.name : "error");
      throw error;
    }
    const caller = c.get("caller") as string | undefined;
    span.setAttributes({ caller: caller ?? "anonymous" });
    const requestId = c.res.headers.get("x-request-id");
    if (requestId) span.setAttributes({ "request.id": requestId });
    const status = c.res.status;
    const body = c.res.body;
    if (!body) {
      span.end(status);
      return;
    }
    c.res = new Response(
      endsWith(body, () => span.end(status)),
      c.res,
    );
  };
}

/** The same body, calling `done` once it has been read to the end or cancelled. */
function endsWith(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          controller.close();
          done();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
}
