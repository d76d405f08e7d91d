/**
 * A missed delivery recovered end to end with the real service process over
 * HTTPS: a live webhook whose receiver (real HTTPS, loopback) is down while
 * the service's own re-check turns a sandbox step into `tracking.delivered`;
 * the delivery is abandoned after six attempts; `POST …/recover` queues it
 * again and the receiver gets it, verified with the spec's signature and
 * with the `standardwebhooks` package; GET /v1/events lists the event under
 * the id the deliveries carried.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { startService, type RunningService } from "../client/service.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let svc: RunningService;
let rx: Receiver;
let down = true;
beforeAll(async () => {
  rx = await startReceiver();
  rx.route("/missed", () => new Response(down ? "down for maintenance" : "ok", { status: down ? 503 : 200 }));
  svc = await startService(
    await webhookEnv({ SANDBOX_STEP_SECONDS: "2", RECHECK_INTERVAL_SECONDS: "1", RECHECK_POLL_SECONDS: "1" }),
  );
}, 30_000);
afterAll(async () => {
  await svc?.stop();
  rx?.stop();
}, 30_000);

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(250);
  }
}

test("an abandoned delivery is recovered and verifies with both signature schemes", async () => {
  const headers = { "x-api-key": svc.key, "content-type": "application/json" };
  const created = await svc.fetch("/v1/webhooks", {
    method: "POST",
    headers,
    body: JSON.stringify({ url: rx.url("/missed"), events: ["tracking.delivered"], mode: "live" }),
  });
  expect(created.status).toBe(201);
  const { data: wh } = (await created.json()) as { data: { id: string; secret: string } };
  // Scenario 2: out for delivery now, delivered at the simulator's next step.
  const tracked = await svc.fetch("/v1/track?courier=delhivery&tracking_number=6000000000122", { headers });
  expect(tracked.status).toBe(200);

  const abandoned = await until("the delivery to be abandoned", async () => {
    const res = await svc.fetch(`/v1/webhooks/${wh.id}/deliveries`, { headers });
    const { data } = (await res.json()) as { data: { deliveries: { id: string; state: string; attempts: number }[] } };
    return data.deliveries.find((d) => d.state === "abandoned");
  });
  expect(abandoned.attempts).toBe(6);
  const missed = rx.on("/missed");
  expect(missed.length).toBe(6);
  const eventId = missed[0]!.headers["x-webhook-event-id"]!;
  expect(missed.every((r) => r.headers["x-webhook-event-id"] === eventId && r.headers["webhook-id"] === eventId)).toBe(
    true,
  );

  down = false;
  const since = new Date(Date.now() - 3600_000).toISOString();
  const rec = await svc.fetch(`/v1/webhooks/${wh.id}/recover`, {
    method: "POST",
    headers,
    body: JSON.stringify({ since }),
  });
  expect(rec.status).toBe(202);
  expect(((await rec.json()) as { data: { queued: number } }).data.queued).toBe(1);
  const [got] = (await rx.waitFor("/missed", 7, 30_000)).slice(6);

  expect(got!.json.event).toBe("tracking.delivered");
  expect(got!.headers["x-webhook-event-id"]).toBe(eventId);
  expect(got!.headers["x-webhook-delivery"]).toBe(`${wh.id}-1`);
  const expected = `sha256=${createHmac("sha256", wh.secret).update(got!.raw).digest("hex")}`;
  expect(timingSafeEqual(Buffer.from(got!.headers["x-service-signature"]!), Buffer.from(expected))).toBe(true);
  expect(new Webhook(wh.secret).verify(got!.text, got!.headers)).toEqual(got!.json);

  const events = await svc.fetch("/v1/events?type=tracking.delivered", { headers });
  const { data } = (await events.json()) as { data: { events: { id: string; payload: unknown }[] } };
  expect(data.events.map((e) => e.id)).toContain(eventId);
}, 120_000);
