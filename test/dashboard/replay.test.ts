/**
 * The dashboard webhook page's Redeliver button and Recover form: each
 * queues new deliveries that the real worker sends to a real HTTPS receiver
 * on loopback; another account's ids are not found; CSRF is required.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, deliveries } from "../../src/db/schema/index.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "../webhooks/fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { Client, csrfOf } from "./support.ts";

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
let alice: Client;
let bob: Client;
let down = true;
const email = `rp-alice-${Bun.randomUUIDv7().slice(-6)}@example.com`;

beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  rx.route("/hook", () => new Response(down ? "down" : "ok", { status: down ? 500 : 200 }));
  worker = createDeliveryWorker(ctx.deps);
  alice = new Client(ctx.app);
  bob = new Client(ctx.app);
  await alice.signUp(email);
  await bob.signUp(`rp-bob-${Bun.randomUUIDv7().slice(-6)}@example.com`);
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

test("Recover queues the abandoned deliveries again and Redeliver one delivery; both reach the receiver", async () => {
  const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email));
  await ctx.tdb.db.update(accounts).set({ plan: "growth" }).where(eq(accounts.id, acc!.id));
  const [created] = await alice.post("/dashboard/webhooks", {
    _csrf: await alice.csrf("/dashboard/webhooks/new"),
    url: rx.url(),
    events: ["tracking.in_transit"],
    mode: "live",
  });
  expect(created.status).toBe(201);
  const shp = await shipment(ctx.tdb.db, [acc!.id]);
  await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(ctx.clock.now()));
  for (let i = 0; i < 7; i++) {
    await worker.runOnce();
    ctx.clock.advance(2000);
  }
  const [row] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.accountId, acc!.id));
  expect(row!.state).toBe("abandoned");
  const wh = row!.webhookId;

  const [page, html] = await alice.get(`/dashboard/webhooks/${wh}`);
  expect(page.status).toBe(200);
  expect(html).toContain(`action="/dashboard/webhooks/${wh}/deliveries/${row!.id}/redeliver"`);
  expect(html).toContain(`action="/dashboard/webhooks/${wh}/recover"`);
  const csrf = csrfOf(html);

  down = false;
  const before = rx.received.length;
  const [rec] = await alice.post(`/dashboard/webhooks/${wh}/recover`, { _csrf: csrf, hours: "24" });
  expect(rec.status).toBe(303);
  expect(rec.headers.get("location")).toBe(`/dashboard/webhooks/${wh}?recovered=1`);
  const [, flash] = await alice.get(rec.headers.get("location")!);
  expect(flash).toContain("1 delivery queued again.");
  await worker.runOnce();
  expect(rx.received.length).toBe(before + 1);

  const [red] = await alice.post(`/dashboard/webhooks/${wh}/deliveries/${row!.id}/redeliver`, { _csrf: csrf });
  expect([red.status, red.headers.get("location")]).toEqual([303, `/dashboard/webhooks/${wh}?done=redelivered`]);
  await worker.runOnce();
  expect(rx.received.length).toBe(before + 2);
  const [a, b] = rx.received.slice(before);
  expect(b!.headers["x-webhook-event-id"]).toBe(a!.headers["x-webhook-event-id"]!);

  // Bob cannot touch Alice's webhook or delivery; no CSRF, no action.
  const [bobRes] = await bob.post(`/dashboard/webhooks/${wh}/deliveries/${row!.id}/redeliver`, {
    _csrf: await bob.csrf(),
  });
  expect(bobRes.status).toBe(404);
  const [noCsrf] = await alice.post(`/dashboard/webhooks/${wh}/recover`, { hours: "24" });
  expect(noCsrf.status).toBe(403);
  await worker.runOnce();
  expect(rx.received.length).toBe(before + 2);
});
