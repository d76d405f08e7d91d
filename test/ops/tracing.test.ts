/**
 * OpenTelemetry traces with the real service process (docs/operations.md, "Traces"): a loopback OTLP/HTTP
 * collector receives the spans of a `/v1/track` lookup whose change emits an event, and of that event's
 * webhook delivery to a loopback receiver, as ONE trace under the client's `traceparent`. Unset, the service
 * sends no span anywhere and no `traceparent` to receivers.
 *
 * NETWORK SAFETY: the collector, the receiver and the service all listen on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { currentTraceParent, inSpan, startRequestSpan, tracingOn } from "../../src/lib/tracing.ts";
import pkg from "../../package.json" with { type: "json" };
import { startService, type RunningService } from "../client/service.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
  links: { traceId: string; spanId: string }[];
}
const SERVER = 2;
const CLIENT = 3;

/** A loopback OTLP/HTTP (JSON) collector: every request it got, and the spans in them. */
function startCollector(status = 200) {
  const requests: { path: string; body: any }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      requests.push({ path: new URL(req.url).pathname, body: await req.json().catch(() => null) });
      return Response.json({}, { status });
    },
  });
  const spans = (): (OtlpSpan & { service: string })[] =>
    requests.flatMap((r) =>
      (r.body?.resourceSpans ?? []).flatMap((rs: any) => {
        const service = rs.resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue;
        return rs.scopeSpans.flatMap((ss: any) => ss.spans.map((s: OtlpSpan) => ({ ...s, service })));
      }),
    );
  return { url: `http://127.0.0.1:${server.port}`, requests, spans, stop: () => server.stop(true) };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};
const hex = (bytes: number) => randomBytes(bytes).toString("hex");

const EVENTS = [
  "tracking.updated",
  "tracking.in_transit",
  "tracking.out_for_delivery",
  "tracking.delivered",
  "tracking.exception",
];

/**
 * Creates a live webhook to `path`, follows a sandbox AWB (digit 1: a new checkpoint every second), then
 * looks it up again, each lookup with a fresh client `traceparent`, until one finds a new checkpoint (its
 * event is delivered to `path`). Returns that lookup's client trace and span ids and the delivery received.
 */
async function lookupThatChanges(svc: RunningService, receiver: Receiver, path: string) {
  const headers = { "x-api-key": svc.key, "content-type": "application/json" };
  const created = await svc.fetch("/v1/webhooks", {
    method: "POST",
    headers,
    body: JSON.stringify({ url: receiver.url(path), events: EVENTS, mode: "live" }),
  });
  expect(created.status).toBe(201);
  const webhookId = ((await created.json()) as { data: { id: string } }).data.id;
  const track = async (traceParent: string) => {
    const res = await svc.fetch("/v1/track?courier=delhivery&tracking_number=1234567890111", {
      headers: { ...headers, traceparent: traceParent },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { Checkpoints: unknown[] } }).data.Checkpoints.length;
  };
  const first = await track(`00-${hex(16)}-${hex(8)}-01`);
  for (let i = 0; i < 200; i++) {
    const traceId = hex(16);
    const spanId = hex(8);
    if ((await track(`00-${traceId}-${spanId}-01`)) > first) {
      const [delivery] = await receiver.waitFor(path, 1, 30_000);
      return { traceId, spanId, delivery: delivery!, webhookId };
    }
    await Bun.sleep(200);
  }
  throw new Error("the sandbox shipment never changed");
}

/** A loopback receiver and collector for a describe block, and the service its test starts (stopped after). */
function loopback() {
  const parts = {} as { receiver: Receiver; collector: ReturnType<typeof startCollector>; svc?: RunningService };
  beforeAll(async () => {
    parts.receiver = await startReceiver();
    parts.collector = startCollector();
  });
  afterAll(async () => {
    await parts.svc?.stop();
    parts.receiver?.stop();
    parts.collector?.stop();
  });
  return parts;
}

describe("traces on (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  const p = loopback();

  test("a lookup, its courier call, its record transaction and its event's delivery arrive as one trace", async () => {
    p.svc = await startService(
      await webhookEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: p.collector.url,
        OTEL_SERVICE_NAME: "ct-traced",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci,k8s.pod.name=api-7d9f%2C1",
        SANDBOX_STEP_SECONDS: "1",
      }),
    );
    const { traceId, spanId, delivery, webhookId } = await lookupThatChanges(p.svc, p.receiver, "/traced");
    const headers = { "x-api-key": p.svc.key, "content-type": "application/json" };
    const deliveryIds = async (id: string) => {
      const res = await p.svc!.fetch(`/v1/webhooks/${id}/deliveries`, { headers });
      const { data } = (await res.json()) as { data: { deliveries: { id: string; event_id: string | null }[] } };
      return data.deliveries;
    };
    const delivered = (await deliveryIds(webhookId)).find(
      (d) => d.event_id === delivery.headers["x-webhook-event-id"],
    )!;
    // A test fire's attempt span names the test delivery it recorded.
    const testHook = await p.svc.fetch("/v1/webhooks", {
      method: "POST",
      headers,
      body: JSON.stringify({ url: p.receiver.url("/traced-test"), events: EVENTS, mode: "test" }),
    });
    const testHookId = ((await testHook.json()) as { data: { id: string } }).data.id;
    const fired = await p.svc.fetch(`/v1/webhooks/${testHookId}/test`, { method: "POST", headers });
    expect(fired.status).toBe(200);
    const [testDelivery] = await deliveryIds(testHookId);
    // A malformed client traceparent is ignored: the request gets a trace of its own.
    const bad = await p.svc.fetch("/v1/couriers", {
      headers: { "x-api-key": p.svc.key, traceparent: "00-not-a-trace-01" },
    });
    expect(bad.status).toBe(200);
    // The receiver got the delivery span's context, in the lookup's trace.
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(delivery.headers.traceparent ?? "");
    expect(sent?.[1]).toBe(traceId);
    // SIGTERM flushes the queued spans before the process exits.
    expect(await p.svc.stop()).toBe(0);
    // The lookup's access line names its trace, so logs and traces join.
    const lines = p.svc
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"msg":"request"') && l.includes("/v1/track"));
    expect(lines.some((l) => JSON.parse(l).trace_id === traceId)).toBe(true);
    p.svc = undefined;

    expect(p.collector.requests.every((r) => r.path === "/v1/traces")).toBe(true);
    const all = p.collector.spans();
    expect(all.every((s) => s.service === "ct-traced")).toBe(true);
    // The resource: the service's version, one instance id for the process, the operator's attributes decoded.
    const resources = p.collector.requests.flatMap((r) =>
      (r.body?.resourceSpans ?? []).map((rs: any) =>
        Object.fromEntries(rs.resource.attributes.map((a: any) => [a.key, a.value.stringValue])),
      ),
    );
    expect(new Set(resources.map((r) => r["service.instance.id"])).size).toBe(1);
    expect(resources[0]).toMatchObject({
      "service.name": "ct-traced",
      "service.version": pkg.version,
      "deployment.environment": "ci",
      "k8s.pod.name": "api-7d9f,1",
    });
    expect(resources[0]!["service.instance.id"]).toMatch(/^[0-9a-f-]{36}$/);
    const trace = all.filter((s) => s.traceId === traceId);
    const one = (name: string) => {
      const found = trace.filter((s) => s.name === name);
      expect([name, found.length]).toEqual([name, 1]);
      return found[0]!;
    };
    const request = one("GET /v1/track");
    expect(request.kind).toBe(SERVER);
    expect(request.parentSpanId).toBe(spanId);
    expect(attr(request, "http.route")).toBe("/v1/track");
    expect(attr(request, "http.response.status_code")).toBe(200);
    const courier = one("courier delhivery");
    expect([courier.kind, courier.parentSpanId, attr(courier, "courier.outcome")]).toEqual([
      CLIENT,
      request.spanId,
      "ok",
    ]);
    const record = one("db shipment record");
    expect(record.parentSpanId).toBe(request.spanId);
    expect(one("outbox enqueue").parentSpanId).toBe(record.spanId);
    const attempt = one("webhook delivery");
    expect([attempt.kind, attempt.parentSpanId, attempt.spanId]).toEqual([CLIENT, record.spanId, sent![2]!]);
    expect([
      attr(attempt, "webhook.outcome"),
      attr(attempt, "http.response.status_code"),
      attr(attempt, "webhook.attempt"),
    ]).toEqual(["delivered", 200, 1]);
    expect([attr(attempt, "webhook.id"), attr(attempt, "webhook.delivery_id")]).toEqual([webhookId, delivered.id]);
    const testAttempt = all.find((s) => s.name === "webhook delivery" && attr(s, "webhook.id") === testHookId)!;
    expect(attr(testAttempt, "webhook.delivery_id")).toBe(testDelivery!.id);
    expect(all.find((s) => s.spanId === testAttempt.parentSpanId)?.name).toBe("POST /v1/webhooks/:webhook_id/test");
    // The worker's claim is its own span, linked to the trace of each event it claimed.
    expect(
      all.some(
        (s) => s.name === "outbox claim" && s.links.some((l) => l.traceId === traceId && l.spanId === record.spanId),
      ),
    ).toBe(true);

    const couriers = all.filter((s) => s.name === "GET /v1/couriers");
    expect(couriers.length).toBe(1);
    expect(couriers[0]!.parentSpanId ?? "").toBe("");
    expect(attr(couriers[0]!, "http.route")).toBe("/v1/couriers");
  }, 90_000);
});

describe("traces on, a scheduled re-check", () => {
  const p = loopback();

  test("a change a re-check finds is one trace from the re-check to the delivery", async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: p.collector.url,
      SANDBOX_STEP_SECONDS: "1",
      RECHECK_INTERVAL_SECONDS: "1",
      RECHECK_POLL_SECONDS: "1",
    };
    p.svc = await startService(await webhookEnv(env));
    const headers = { "x-api-key": p.svc.key, "content-type": "application/json" };
    expect(
      (
        await p.svc.fetch("/v1/webhooks", {
          method: "POST",
          headers,
          body: JSON.stringify({ url: p.receiver.url("/rechecked"), events: EVENTS, mode: "live" }),
        })
      ).status,
    ).toBe(201);
    expect((await p.svc.fetch("/v1/track?courier=delhivery&tracking_number=1234567890111", { headers })).status).toBe(
      200,
    );
    const [delivery] = await p.receiver.waitFor("/rechecked", 1, 30_000);
    const traceId = /^00-([0-9a-f]{32})-/.exec(delivery!.headers.traceparent ?? "")?.[1];
    expect(await p.svc.stop()).toBe(0);
    p.svc = undefined;

    const trace = p.collector.spans().filter((s) => s.traceId === traceId);
    const named = (name: string) => trace.find((s) => s.name === name)!;
    expect(trace.map((s) => s.name).sort()).toEqual([
      "courier delhivery",
      "db shipment record",
      "outbox enqueue",
      "recheck",
      "webhook delivery",
    ]);
    expect(named("recheck").parentSpanId ?? "").toBe("");
    expect(named("courier delhivery").parentSpanId).toBe(named("recheck").spanId);
    expect(named("db shipment record").parentSpanId).toBe(named("recheck").spanId);
    expect(named("webhook delivery").parentSpanId).toBe(named("db shipment record").spanId);
  }, 90_000);
});

describe("traces off (OTEL_EXPORTER_OTLP_ENDPOINT unset)", () => {
  const p = loopback();

  test("no span reaches a collector and receivers get no traceparent", async () => {
    // The signal-specific variable the OpenTelemetry exporter itself would read: the service must not start one.
    p.svc = await startService(
      await webhookEnv({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${p.collector.url}/v1/traces`,
        SANDBOX_STEP_SECONDS: "1",
      }),
    );
    const { delivery } = await lookupThatChanges(p.svc, p.receiver, "/untraced");
    expect(delivery.headers.traceparent).toBeUndefined();
    expect(p.svc.stdout()).not.toContain("traces on");
    // A stop flushes whatever a provider would have queued: nothing is.
    expect(await p.svc.stop()).toBe(0);
    p.svc = undefined;
    expect(p.collector.requests.length).toBe(0);
  }, 90_000);
});

describe("a collector that refuses the spans", () => {
  let collector: ReturnType<typeof startCollector>;
  let svc: RunningService | undefined;
  beforeAll(() => {
    collector = startCollector(400);
  });
  afterAll(async () => {
    await svc?.stop();
    collector?.stop();
  });

  test("costs only the spans: requests are answered, the loss is one warning, the stop is clean", async () => {
    svc = await startService({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const res = await svc.fetch("/v1/couriers", { headers: { "x-api-key": svc.key } });
    expect(res.status).toBe(200);
    const stopped = svc;
    svc = undefined;
    expect(await stopped.stop()).toBe(0);
    expect(collector.requests.length).toBeGreaterThan(0);
    const warnings = stopped
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"trace export failed"'));
    expect(warnings.length).toBeGreaterThan(0);
    expect(JSON.parse(warnings[0]!).level).toBe("warn");
  }, 60_000);
});

test("off, the helpers do no span work: no request span is started and no context is made", async () => {
  expect(tracingOn()).toBe(false);
  expect(startRequestSpan(new Request("http://localhost/v1/couriers"))).toBeUndefined();
  expect(await inSpan("x", {}, async (span) => [span, currentTraceParent()])).toEqual([undefined, null]);
});
