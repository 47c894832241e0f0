import { type Attributes, context, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";

/**
 * A request's span (a chat turn, an MCP request): what runs inside `run` (and everything it
 * starts, across awaits) has it as parent; `end` closes it once the answer's body is done.
 */
export interface RequestSpan {
  run<T>(fn: () => T): T;
  setAttributes(attributes: Attributes): void;
  /** End the span; an HTTP status >= 500 or an `error` marks it failed. Only the first call counts. */
  end(status?: number, error?: string): void;
}

export function startRequestSpan(tracer: Tracer, name: string, attributes: Attributes): RequestSpan {
  const parent = context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  let ended = false;
  return {
    run: (fn) => context.with(ctx, fn),
    setAttributes: (more) => span.setAttributes(more),
    end(status, error) {
      if (ended) return;
      ended = true;
      if (status !== undefined) span.setAttribute("http.response.status_code", status);
      if (error || (status !== undefined && status >= 500))
        span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
      span.end();
    },
  };
}
