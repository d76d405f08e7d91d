/**
 * The typed client (clients/typescript) against the real service process
 * over HTTPS, with a real HTTPS receiver on loopback: the committed types
 * match the live document; track (courier=auto), shipments, webhooks with an
 * idempotent retry, a test fire verified with both signature helpers (and
 * `standardwebhooks`), events.
 */
import { afterAll, beforeAll, expect, setSystemTime, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { fetchDocument, generateTypes, SCHEMA_FILE } from "../../clients/typescript/generate.ts";
import {
  createTrackingClient,
  verifyServiceSignature,
  verifyStandardWebhook,
  type TrackingClient,
} from "../../clients/typescript/index.ts";
import { startReceiver, testCert, type Receiver } from "../webhooks/receiver.ts";
import { startService, type RunningService } from "./service.ts";

let svc: RunningService;
let rx: Receiver;
let api: TrackingClient;
beforeAll(async () => {
  rx = await startReceiver();
  svc = await startService({
    WEBHOOK_CA_FILE: (await testCert()).caFile,
    WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8,::1/128",
  });
  // The service's certificate is self-signed: this fetch accepts it, for this loopback service only.
  const insecure = ((input: Request) =>
    fetch(input, { tls: { rejectUnauthorized: false } } as RequestInit)) as typeof fetch;
  api = createTrackingClient({ baseUrl: svc.baseUrl, apiKey: svc.key, fetch: insecure });
}, 30_000);
afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
  rx?.stop();
}, 30_000);

test("the committed types are what the generator makes of the live document (bun run client:generate)", async () => {
  const live = await generateTypes(await fetchDocument(`${svc.baseUrl}/openapi.json`));
  expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(live);
}, 30_000);

test("track, shipments, webhooks with an idempotent retry, a verified test fire, events", async () => {
  const tracked = await api.GET("/v1/track", {
    params: { query: { courier: "auto", tracking_number: "1Z12345E0205277680" } },
  });
  expect(tracked.response.status).toBe(200);
  expect(tracked.data?.detected_courier).toBe("ups");
  expect(tracked.data?.data.ShipmentState).toBe("delivered");

  const followed = await api.POST("/v1/shipments", {
    body: { shipments: [{ courier: "delhivery", tracking_number: "5555555555121" }] },
  });
  expect(followed.response.status).toBe(202);
  expect(followed.data?.data.shipments[0]?.result).toBe("accepted");
  const listed = await api.GET("/v1/shipments", { params: { query: { courier: "delhivery" } } });
  expect(listed.data?.data.shipments.map((s) => s.tracking_number)).toEqual(["5555555555121"]);
  const stored = await api.GET("/v1/shipments/{courier}/{tracking_number}", {
    params: { path: { courier: "delhivery", tracking_number: "5555555555121" } },
  });
  expect(stored.response.status).toBe(200);
  expect(typeof stored.data?.data.ShipmentState).toBe("string");

  const body = { url: rx.url("/typed"), events: ["tracking.delivered" as const], mode: "test" as const };
  const header = { "Idempotency-Key": "typed-client-create-1" };
  const first = await api.POST("/v1/webhooks", { body, params: { header } });
  const retry = await api.POST("/v1/webhooks", { body, params: { header } });
  expect([first.response.status, retry.response.status]).toEqual([201, 201]);
  expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
  expect(retry.data?.data.id).toBe(first.data!.data.id);
  const all = await api.GET("/v1/webhooks");
  expect(all.data?.data.webhooks.filter((w) => w.url === body.url).length).toBe(1);

  // A fresh secret, then a test fire verified with both helpers and the standardwebhooks package.
  const rotated = await api.POST("/v1/webhooks/rotate-secret");
  const secret = rotated.data!.data.secret;
  const fired = await api.POST("/v1/webhooks/{webhook_id}/test", {
    params: { path: { webhook_id: first.data!.data.id } },
    body: { event: "tracking.delivered" },
  });
  expect(fired.data?.data.delivered).toBe(true);
  const [hit] = rx.on("/typed");
  expect(verifyServiceSignature(secret, hit!.raw, hit!.headers["x-service-signature"])).toBe(true);
  expect(verifyServiceSignature(`${secret}x`, hit!.raw, hit!.headers["x-service-signature"])).toBe(false);
  expect(verifyStandardWebhook(secret, hit!.raw, hit!.headers)).toBe(true);
  // An hour later (the clock faked), the same delivery is a replay: refused.
  setSystemTime(new Date(Date.now() + 3600_000));
  try {
    expect(verifyStandardWebhook(secret, hit!.raw, hit!.headers)).toBe(false);
  } finally {
    setSystemTime();
  }
  expect(verifyStandardWebhook(secret, `${hit!.text} `, hit!.headers)).toBe(false);
  expect(new Webhook(secret).verify(hit!.text, hit!.headers)).toEqual(hit!.json);

  const events = await api.GET("/v1/events", { params: { query: { limit: 5 } } });
  expect(events.response.status).toBe(200);
  expect(Array.isArray(events.data?.data.events)).toBe(true);
}, 60_000);
