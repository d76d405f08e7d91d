/**
 * Failure test with real processes ("kill -9 of the worker
 * mid-send"): the service claims a webhook delivery and is killed with
 * SIGKILL while the receiver still holds the request. A second process on
 * the same database (same SECRETS_KEY, as a redeployed replica would have)
 * re-claims the delivery when its lease runs out and delivers it: at least
 * once, nothing lost, signed with the account's secret.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { events } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { fanOutEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import { startService, type RunningService } from "../client/service.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { shipment } from "../webhooks/fixtures.ts";

let tdb: TestDatabase;
let receiver: Receiver;
const running: RunningService[] = [];
let release: () => void = () => {};

beforeAll(async () => {
  tdb = await createTestDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  release();
  for (const s of running) await s.stop().catch(() => {});
  receiver?.stop();
  await tdb?.drop();
});

test("a delivery claimed by a process killed mid-send is delivered by the next process (at least once)", async () => {
  // 1 s per attempt and 1 s of slack keep the delivery lease short: (5 redirects + 1) × 1 s + 1 s.
  const env = await webhookEnv({
    WEBHOOK_TIMEOUT_MS: "1000",
    LEASE_SLACK_SECONDS: "1",
    SECRETS_KEY: randomBytes(32).toString("base64url"),
  });
  const first = await startService(env, 20_000, { tdb });
  running.push(first);

  const headers = { "x-api-key": first.key, "content-type": "application/json" };
  const created = await first.fetch("/v1/webhooks", {
    method: "POST",
    headers,
    body: JSON.stringify({ url: receiver.url("/held"), events: ["tracking.delivered"], mode: "live" }),
  });
  expect(created.status).toBe(201);
  const webhook = ((await created.json()) as { data: { id: string; secret: string } }).data;

  // The first request is held open (the process dies while sending); later ones are answered at once.
  const held = new Promise<void>((r) => (release = r));
  receiver.route("/held", async (_req, _url, n) => {
    if (n === 1) await held;
    return new Response("ok");
  });

  // An event for a shipment the dev account follows, written the way a re-check writes it (NOTIFY wakes the worker).
  const accountId = (await tdb.sql`select id from accounts where email = 'dev@localhost'`)[0]!.id as string;
  const shp = await shipment(tdb.db, [accountId], {
    courier: "delhivery",
    trackingNumber: "1234567890120",
    state: "delivered",
  });
  await tdb.db.transaction(async (tx) => {
    const eventId = newId("evt");
    const enqueuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    await tx
      .insert(events)
      .values({ id: eventId, shipmentId: shp, type: "tracking.delivered", status: "delivered", enqueuedAt });
    expect(await fanOutEvent(tx, { eventId, shipmentId: shp, type: "tracking.delivered", enqueuedAt })).toBe(1);
  });

  await receiver.waitFor("/held", 1, 15_000);
  process.kill(first.pid, "SIGKILL");
  // The first process is really gone (so it cannot be the one retrying later).
  const gone = Date.now() + 5_000;
  while (
    Date.now() < gone &&
    (() => {
      try {
        process.kill(first.pid, 0);
        return true;
      } catch {
        return false;
      }
    })()
  )
    await Bun.sleep(50);
  expect(() => process.kill(first.pid, 0)).toThrow();
  const killed = await tdb.sql`select state, attempts, lease_until from deliveries where webhook_id = ${webhook.id}`;
  expect(killed[0]!.state).toBe("pending");
  expect(killed[0]!.lease_until).not.toBeNull();

  const second = await startService(env, 20_000, { tdb, expectKey: false });
  running.push(second);
  const got = await receiver.waitFor("/held", 2, 75_000);
  const redelivered = got[1]!;
  expect(redelivered.json.event).toBe("tracking.delivered");
  expect(redelivered.json.data.tracking_number).toBe("1234567890120");
  expect(redelivered.headers["x-service-signature"]).toBe(
    "sha256=" + createHmac("sha256", webhook.secret).update(redelivered.raw).digest("hex"),
  );

  // The outcome is recorded by the second process: delivered, once.
  const deadline = Date.now() + 10_000;
  let rows = await tdb.sql`select state from deliveries where webhook_id = ${webhook.id}`;
  while (rows[0]!.state !== "delivered" && Date.now() < deadline) {
    await Bun.sleep(200);
    rows = await tdb.sql`select state from deliveries where webhook_id = ${webhook.id}`;
  }
  expect(rows.map((r) => r.state)).toEqual(["delivered"]);
}, 120_000);
