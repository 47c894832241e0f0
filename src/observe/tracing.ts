import { OpenTelemetry } from "@ai-sdk/otel";
import { context, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TelemetryOptions } from "ai";

/**
 * Traces (docs/deploy.md#traces-and-metrics): on only when the standard
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and then exported
 * over OTLP/HTTP (JSON) by a batch processor flushed on shutdown. Otherwise nothing is started and
 * no span is made. The exporter reads the other OTEL_EXPORTER_OTLP_* variables itself
 * (headers, timeout); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service
 * (default `x402-chat-agent`); OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off.
 *
 * The tracer is handed to whoever makes spans (no global tracer provider: several services in one
 * process, as tests run them, each export their own). The async-local context manager is
 * process-wide by nature (OpenTelemetry's API holds it): registered once, it makes a span active
 * across awaits, so spans made inside a request (a payment's, the model's) are its children.
 */
export interface Tracing {
  /** Absent when tracing is off. */
  tracer?: Tracer;
  /** The AI SDK's own telemetry for `streamText` (steps, model calls, tools); absent when off. */
  aiTelemetry?: TelemetryOptions;
  /** Export the spans ended so far (a serverless function, before it is frozen). */
  flush(): Promise<void>;
  /** Export what is left and stop. */
  shutdown(): Promise<void>;
}

export const SERVICE_NAME = "x402-chat-agent";

/** Whether the environment asks for traces. */
export function tracingWanted(env: Record<string, string | undefined>): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || endpoint.trim() === "") return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== "none";
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/** The process's async-local context manager, registered on first use. */
function ensureContextManager(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager();
  context.setGlobalContextManager(contextManager.enable());
}

/** Start tracing when the environment asks for it (see above); `off` otherwise. */
export function startTracing(env: Record<string, string | undefined> = process.env): Tracing {
  if (!tracingWanted(env)) return { flush: async () => {}, shutdown: async () => {} };
  ensureContextManager();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": SERVICE_NAME }))
    .merge(detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }));
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  const tracer = provider.getTracer(SERVICE_NAME);
  return {
    tracer,
    aiTelemetry: {
      // Prompts, answers and tool results stay out of traces (they are the users'); the steps,
      // model calls, tools, token counts and finish reasons go in.
      recordInputs: false,
      recordOutputs: false,
      functionId: "chat-turn",
      integrations: new OpenTelemetry({ tracer }),
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
