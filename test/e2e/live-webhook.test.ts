/**
 * A live webhook end to end with the real service process: the growth
 * development account creates a live webhook pointing at a real HTTPS
 * receiver on loopback, tracks a sandbox AWB ending in 1, and — with nothing
 * else calling the API — the service's own re-checks turn the simulator's
 * steps into correctly signed `tracking.*` deliveries until `tracking.delivered`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import { startService, type RunningService } from "../client/service.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let svc: RunningService;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  // Simulator steps every 2 s; followed shipments are due again 1 s after each check and the
  // scheduler drains every second, so every step is seen by a re-check.
  svc = await startService(
    await webhookEnv({ SANDBOX_STEP_SECONDS: "2", RECHECK_INTERVAL_SECONDS: "1", RECHECK_POLL_SECONDS: "1" }),
  );
});
afterAll(async () => {
  await svc?.stop();
  receiver?.stop();
});

test("a live webhook receives signed tracking.* events for a followed shipment until tracking.delivered", async () => {
  const headers = { "x-api-key": svc.key, "content-type": "application/json" };
  const created = await svc.fetch("/v1/webhooks", {
    method: "POST",
    headers,
    body: JSON.stringify({
      url: receiver.url("/live"),
      events: [
        "tracking.updated",
        "tracking.in_transit",
        "tracking.out_for_delivery",
        "tracking.delivered",
        "tracking.exception",
      ],
      mode: "live",
    }),
  });
  expect(created.status).toBe(201);
  const { data: webhook } = (await created.json()) as { data: { id: string; secret: string } };
  expect(webhook.secret).toStartWith("whsec_");

  const awb = "1234567890111";
  const tracked = await svc.fetch(`/v1/track?courier=delhivery&tracking_number=${awb}`, { headers });
  expect(tracked.status).toBe(200);
  expect(((await tracked.json()) as { data: { ShipmentState: string } }).data.ShipmentState).toBe("intransit");

  // Wait (bounded) for the delivered event; the service does everything on its own from here.
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && !receiver.on("/live").some((r) => r.json?.event === "tracking.delivered"))
    await Bun.sleep(250);
  const got = receiver.on("/live");
  const events = got.map((r) => r.json.event as string);
  expect(events.at(-1)).toBe("tracking.delivered");
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect(events.every((e) => e.startsWith("tracking."))).toBe(true);

  for (const r of got) {
    // Signature over the exact raw bytes with the account's secret (spec: Authentication 5).
    const expected = "sha256=" + createHmac("sha256", webhook.secret).update(r.raw).digest("hex");
    expect(timingSafeEqual(Buffer.from(r.headers["x-service-signature"]!), Buffer.from(expected))).toBe(true);
    expect(r.headers["x-webhook-event"]).toBe(r.json.event);
    expect(r.headers["x-webhook-mode"]).toBe("live");
    expect(r.headers["x-webhook-delivery"]).toBe(`${webhook.id}-1`);
    expect(r.json.data.tracking_number).toBe(awb);
    expect(r.json.data.courier).toBe("delhivery");
    expect(r.json.enqueued_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(r.json.data.enqueued_at).toBe(r.json.enqueued_at);
  }
  const last = got.at(-1)!.json;
  expect(last.data.status).toBe("delivered");
  expect(last.data.checkpoints[0].checkpoint_state).toBe("delivered");
  expect(last.data.checkpoints[0].date).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4}$/);
}, 120_000);
