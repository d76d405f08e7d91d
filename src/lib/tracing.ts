/**
 * OpenTelemetry traces (docs/operations.md#traces), off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; off, every helper
 * runs its function bare. The active span travels in this module's own AsyncLocalStorage (nothing global).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { TracingSdk } from "./tracing-sdk.ts";

export { SpanKind, SpanStatusCode, type Span };

let provider: TracingSdk | undefined;
let tracer: Tracer | undefined;
/** Set with the provider; read only while `tracer` is. */
let propagator: TracingSdk["propagator"];
let reportError: (err: unknown) => void = () => undefined;
const active = new AsyncLocalStorage<Context>();
const fromRecord = {
  get: (c: Record<string, string>, k: string) => c[k],
  keys: (c: Record<string, string>) => Object.keys(c),
};
const fromHeaders = {
  get: (h: Headers, k: string) => h.get(k) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT; unset = tracing off. */
  endpoint: string | undefined;
  /** OTEL_SERVICE_NAME: the resource's `service.name`. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES as given (`k=v,k=v`); unset: none beyond the defaults. */
  resourceAttributes?: string;
  /** The resource's `service.version` unless the attributes name one. */
  serviceVersion?: string;
  /** Hears each failed export (that batch's spans are lost). */
  onError?: (err: unknown) => void;
}

/**
 * The spans' resource (OpenTelemetry resource semantic conventions, "Service"): `service.version` and a
 * `service.instance.id` (a UUID per process) by default, then OTEL_RESOURCE_ATTRIBUTES (W3C Baggage syntax, values
 * percent-decoded, as the SDK specification's environment variables define it), then `service.name`.
 */
function tracingResource(
  opts: Pick<TracingOptions, "serviceName" | "resourceAttributes" | "serviceVersion">,
): Record<string, string> {
  const resource: Record<string, string> = { "service.instance.id": crypto.randomUUID() };
  if (opts.serviceVersion) resource["service.version"] = opts.serviceVersion;
  for (const pair of opts.resourceAttributes?.split(",") ?? []) {
    const i = pair.indexOf("=");
    if (i <= 0) continue;
    try {
      resource[pair.slice(0, i).trim()] = decodeURIComponent(pair.slice(i + 1).trim());
    } catch {
      resource[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
    }
  }
  resource["service.name"] = opts.serviceName;
  return resource;
}

/** True when spans are recorded (a provider was started). */
export const tracingOn = (): boolean => tracer !== undefined;

/** Starts the provider when `opts.endpoint` is set (once per process). Returns whether tracing is on. */
export function startTracing(opts: TracingOptions): boolean {
  if (!opts.endpoint || provider) return tracingOn();
  // The SDK loads only here (docs/performance.md, "Idle RSS"); Bun's `require` loads an ES module synchronously.
  const { startSdk }: typeof import("./tracing-sdk.ts") = require("./tracing-sdk.ts");
  provider = startSdk(opts.endpoint, tracingResource(opts), opts.onError);
  if (opts.onError) reportError = opts.onError;
  ({ tracer, propagator } = provider);
  return true;
}

/** Sends the spans still queued and stops the provider; never throws (a failed send goes to `onError`). */
export async function stopTracing(): Promise<void> {
  const p = provider;
  provider = tracer = undefined;
  await p?.shutdown().catch(reportError);
}

const current = (): Context => active.getStore() ?? ROOT_CONTEXT;

/** The context a W3C `traceparent` names; the root context when it is absent or malformed. */
function contextOf(traceParent: string | null | undefined): Context {
  return traceParent ? propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, fromRecord) : ROOT_CONTEXT;
}

/** The W3C `traceparent` of the active span, or null (tracing off, or no span). */
export function currentTraceParent(): string | null {
  if (!tracer) return null;
  const carrier: Record<string, string> = {};
  propagator.inject(current(), carrier, {
    set: (c, k, v) => {
      c[k] = v;
    },
  });
  return carrier.traceparent ?? null;
}

/** Marks `span` failed with the error's class only: messages may quote URLs or courier answers. */
function failed(span: Span, err: unknown): void {
  const type = (err as { code?: unknown })?.code ?? (err as Error)?.name ?? "Error";
  span.setAttribute("error.type", String(type));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export interface SpanOptions {
  kind?: SpanKind;
  /** A stored W3C `traceparent` to continue; null: a new trace; absent: the active span. */
  parent?: string | null;
}

/** Runs `fn` in a new span, ended when `fn` settles (failed when it throws); tracing off: `fn(undefined)`. */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  opts: SpanOptions = {},
): Promise<T> {
  if (!tracer) return fn(undefined);
  const parent = opts.parent === undefined ? current() : contextOf(opts.parent);
  const span = tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes }, parent);
  return active.run(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Records a span from `startMs` (epoch ms) to now, in its own trace linked to up to 32 stored `traceparent`s. */
export function pastSpan(
  name: string,
  startMs: number,
  attributes: Attributes,
  links: readonly (string | null)[],
): void {
  if (!tracer) return;
  const ls: Link[] = [];
  for (const tp of links) {
    const sc = tp ? trace.getSpanContext(contextOf(tp)) : undefined;
    if (sc && ls.length < 32) ls.push({ context: sc });
  }
  tracer.startSpan(name, { attributes, links: ls, startTime: startMs }, ROOT_CONTEXT).end();
}

/** The SERVER span of one HTTP request (`<METHOD> <route>`, a child of the client's `traceparent`). */
export class RequestSpan {
  /** The span's trace id (32 hex digits), for the access line. */
  readonly traceId: string;

  constructor(
    private readonly span: Span,
    private readonly context: Context,
    private readonly method: string,
  ) {
    this.traceId = span.spanContext().traceId;
  }

  /** Runs `fn(arg)` with this span active: spans started inside, directly or after awaits, are its children. */
  run<A, R>(fn: (arg: A) => R, arg: A): R {
    return active.run(this.context, fn, arg);
  }

  /** Ends the span for an answered request: its route template and status (failed from 500). */
  answered(route: string, status: number): void {
    this.span.updateName(`${this.method} ${route}`);
    this.span.setAttributes({ "http.route": route, "http.response.status_code": status });
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }

  /** Ends the span for a request that threw instead of answering. */
  threw(err: unknown): void {
    failed(this.span, err);
    this.span.end();
  }
}

/** Starts the SERVER span of `req`; undefined when tracing is off (no span work at all). */
export function startRequestSpan(req: Request): RequestSpan | undefined {
  const t = tracer;
  if (!t) return undefined;
  const parent = propagator.extract(ROOT_CONTEXT, req.headers, fromHeaders);
  const span = t.startSpan(
    req.method,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } },
    parent,
  );
  return new RequestSpan(span, trace.setSpan(parent, span), req.method);
}
