/**
 * The OpenTelemetry SDK half of traces (provider, OTLP/HTTP exporter, W3C propagator), loaded by `startTracing` only
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set: a service without traces never loads it (docs/performance.md, "Idle RSS").
 */
import type { Tracer } from "@opentelemetry/api";
import { setGlobalErrorHandler, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

/** A started provider: its tracer, the W3C propagator, and `shutdown` (sends what is queued). */
export interface TracingSdk {
  tracer: Tracer;
  propagator: W3CTraceContextPropagator;
  shutdown(): Promise<void>;
}

/** Starts a provider exporting to `<endpoint>/v1/traces` with `resource` attributes; `onError` hears failed exports. */
export function startSdk(
  endpoint: string,
  resource: Record<string, string>,
  onError?: (err: unknown) => void,
): TracingSdk {
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  if (onError) setGlobalErrorHandler(onError);
  return {
    tracer: provider.getTracer("courier-tracking-api"),
    propagator: new W3CTraceContextPropagator(),
    shutdown: () => provider.shutdown(),
  };
}
