/** One attempt: body from current data, serialised once, exactly those bytes signed and sent (spec: Authentication 5). */
import type { AppDeps } from "../../../deps.ts";
import type { EventType } from "../../../domain/events.ts";
import { WebhookSender, type SendOutcome } from "./http.ts";
import { isoSecond, serialisePayload, type PayloadData } from "./payload.ts";
import { cachingResolver, systemResolver, type Resolver } from "./address-guard.ts";
import { deliveryHeaders } from "./signing.ts";
import { newId } from "../../../lib/ids.ts";
import { offTheClock } from "../../../lib/deadline.ts";
import { currentTraceParent, inSpan, SpanKind, SpanStatusCode, tracingOn } from "../../../lib/tracing.ts";
import { sandboxEcho } from "../../postman/echo.ts";

export interface AttemptInput {
  webhookId: string;
  url: string;
  event: EventType;
  mode: "live" | "test";
  /** 1-based (`X-Webhook-Delivery: <webhook_id>-<attempt>`). */
  attempt: number;
  enqueuedAt: Date;
  data: (enqueuedAt: string) => PayloadData;
  secret: string;
  /** The webhook's custom headers, raw (sent to its own origin only). */
  headers?: Record<string, string>;
  /** The event's id (`evt_…`, same on every retry); a test fire without a stored event gets a fresh one. */
  eventId?: string;
  /** The event's number for this webhook (`X-Webhook-Sequence`); absent for test fires. */
  sequence?: number | null;
  /** When the attempt is made, ms since the epoch (default: the system clock). */
  nowMs?: number;
  /** The delivery row this attempt belongs to (span attribute `webhook.delivery_id`, docs/operations.md, Traces). */
  deliveryId: string;
  /** The event's stored W3C `traceparent` to continue; null: a trace of its own; absent: the active span's. */
  traceParent?: string | null;
  /** Changes the service's headers after signing: the receiver audit marks its cases and removes signatures. */
  adjustHeaders?: (headers: Record<string, string>) => void;
}

/** Sends one attempt, never throws; with tracing, in a CLIENT span whose `traceparent` the receiver gets. */
export function sendAttempt(sender: WebhookSender, a: AttemptInput): Promise<SendOutcome> {
  if (!tracingOn()) return send(sender, a, null);
  const attributes = {
    "webhook.id": a.webhookId,
    "webhook.event": a.event,
    "webhook.attempt": a.attempt,
    "webhook.delivery_id": a.deliveryId,
  };
  return inSpan(
    "webhook delivery",
    attributes,
    async (span) => {
      const out = await send(sender, a, currentTraceParent());
      if (!span) return out;
      span.setAttribute("webhook.outcome", out.kind);
      if (out.statusCode !== null) span.setAttribute("http.response.status_code", out.statusCode);
      if (out.kind !== "delivered") span.setStatus({ code: SpanStatusCode.ERROR });
      return out;
    },
    { kind: SpanKind.CLIENT, parent: a.traceParent },
  );
}

async function send(sender: WebhookSender, a: AttemptInput, traceParent: string | null): Promise<SendOutcome> {
  const enq = isoSecond(a.enqueuedAt);
  const body = serialisePayload(a.event, enq, a.data(enq), a.sequence);
  const headers = deliveryHeaders(
    {
      secret: a.secret,
      eventId: a.eventId ?? newId("evt"),
      webhookId: a.webhookId,
      attempt: a.attempt,
      event: a.event,
      mode: a.mode,
      nowMs: a.nowMs ?? Date.now(),
      sequence: a.sequence,
    },
    body,
  );
  if (traceParent) headers.traceparent = traceParent;
  a.adjustHeaders?.(headers);
  // In a request (a test fire, an audit) the receiver's time, bounded by its own timeout, spends no database deadline.
  return offTheClock(() => sender.send({ url: a.url, body, headers, customHeaders: a.headers }));
}

/** The sender configured from `WEBHOOK_*` settings, host names cached per sender ({@link cachingResolver}). */
export function senderFromConfig(
  deps: Pick<AppDeps, "config" | "clock">,
  resolver: Resolver = systemResolver,
): WebhookSender {
  return new WebhookSender({
    allowCidrs: deps.config.webhookAllowPrivateCidrs,
    caFile: deps.config.webhookCaFile,
    sandboxEcho: sandboxEcho(deps.config),
    timeoutMs: deps.config.webhookTimeoutMs,
    resolver: cachingResolver(resolver, { now: () => deps.clock.now() }),
    clock: deps.clock,
  });
}
