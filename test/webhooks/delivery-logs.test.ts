/**
 * What the delivery worker tells an operator (docs/logging.md, Delivery lines): one `warn` line per failed
 * attempt, one `error` line per delivery abandoned and per webhook deactivated, with ids, the attempt number,
 * the receiver's status or error class and the next attempt's time; never the URL's path or query, the signing
 * secret or the receiver's answer. Real PostgreSQL, a real HTTPS receiver on loopback answering 500 and 401, a
 * captured logger; the FakeClock drives the retries (no sleeps).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/log.ts";
import { DEACTIVATE_AFTER_FAILURES, MAX_ATTEMPTS } from "../../src/domain/delivery.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { freePort } from "../client/service.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
const lines: string[] = [];
const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
const QUERY_TOKEN = "qtok-7f3a9c1e55";
const BODY_MARK = "receiver-said-b41d2e";

beforeAll(async () => {
  ctx = await testContext(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1" }));
  rx = await startReceiver();
  rx.route("/h500", () => new Response(`${BODY_MARK} 500`, { status: 500 }));
  rx.route("/h401", () => new Response(`${BODY_MARK} 401`, { status: 401 }));
  worker = createDeliveryWorker({ ...ctx.deps, log: createLogger("debug", {}, (l) => lines.push(l)) });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

async function liveWebhook(url: string) {
  const acc = await ctx.account("business");
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url, events: ["tracking.in_transit"], mode: "live" }),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  return {
    acc,
    id: body.data.id as string,
    secret: body.data.secret as string,
    shp: await shipment(ctx.tdb.db, [acc.id]),
  };
}

/** Runs every attempt due, moving the clock past each retry, until nothing is due. */
async function drain(): Promise<number> {
  let attempts = 0;
  for (let round = 0; round <= MAX_ATTEMPTS; round++) {
    attempts += await worker.runOnce();
    ctx.clock.advance(1_500);
  }
  return attempts;
}

test("each failed attempt is one warn line; the abandoned delivery one error line; nothing secret in either", async () => {
  lines.length = 0;
  const w = await liveWebhook(`${rx.url("/h500")}?token=${QUERY_TOKEN}`);
  await emit(ctx.tdb.db, w.shp, "tracking.in_transit", new Date(ctx.clock.now()));
  expect(await drain()).toBe(MAX_ATTEMPTS);
  const all = parsed();
  const warns = all.filter((l) => l.level === "warn" && l.msg === "webhook delivery attempt failed");
  expect(warns.map((l) => l.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
  const deliveryId = warns[0]!.delivery_id;
  expect(deliveryId).toMatch(/^dlv_/);
  const started = ctx.clock.now() - (MAX_ATTEMPTS + 1) * 1_500; // drain() moved the fake clock 1.5 s per round
  for (const [i, l] of warns.entries()) {
    expect(l).toMatchObject({
      webhook_id: w.id,
      delivery_id: deliveryId,
      status: 500,
      mode: "live",
      event: "tracking.in_transit",
      host: `127.0.0.1:${rx.port}`,
    });
    // Attempt i + 1 ran at started + i × 1.5 s; the schedule puts the next one 1 s later; the last has none.
    if (i < 5) expect(Date.parse(l.next_attempt_at)).toBe(started + i * 1_500 + 1_000);
    else expect(l.next_attempt_at).toBeNull();
  }
  const errors = all.filter((l) => l.level === "error");
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({
    msg: `webhook delivery abandoned after ${MAX_ATTEMPTS} failed attempts`,
    webhook_id: w.id,
    delivery_id: deliveryId,
    attempt: 6,
    status: 500,
  });
  const text = lines.join("\n");
  for (const secret of [QUERY_TOKEN, BODY_MARK, w.secret, w.acc.key, "/h500"]) expect(text).not.toContain(secret);
});

test(`${DEACTIVATE_AFTER_FAILURES} deliveries of 401s: ${DEACTIVATE_AFTER_FAILURES * MAX_ATTEMPTS} warn lines, one error per abandoned delivery, one for the deactivation`, async () => {
  lines.length = 0;
  const w = await liveWebhook(rx.url("/h401"));
  for (let i = 0; i < DEACTIVATE_AFTER_FAILURES; i++)
    await emit(ctx.tdb.db, w.shp, "tracking.in_transit", new Date(ctx.clock.now()));
  expect(await drain()).toBe(DEACTIVATE_AFTER_FAILURES * MAX_ATTEMPTS);
  const all = parsed();
  const warns = all.filter((l) => l.level === "warn");
  expect(warns).toHaveLength(DEACTIVATE_AFTER_FAILURES * MAX_ATTEMPTS);
  expect(
    warns.every((l) => l.msg === "webhook delivery attempt failed" && l.status === 401 && l.webhook_id === w.id),
  ).toBe(true);
  const abandoned = all.filter((l) => l.level === "error" && String(l.msg).startsWith("webhook delivery abandoned"));
  expect(new Set(abandoned.map((l) => l.delivery_id)).size).toBe(DEACTIVATE_AFTER_FAILURES);
  const deactivated = all.filter((l) => l.level === "error" && String(l.msg).startsWith("webhook deactivated"));
  expect(deactivated).toHaveLength(1);
  expect(deactivated[0]).toMatchObject({ webhook_id: w.id });
  const text = lines.join("\n");
  for (const secret of [BODY_MARK, w.secret, w.acc.key]) expect(text).not.toContain(secret);
});

test("an attempt without an answer names the error class and no status", async () => {
  lines.length = 0;
  const closed = freePort(); // nothing listens there
  const w = await liveWebhook(`https://127.0.0.1:${closed}/hook`);
  await emit(ctx.tdb.db, w.shp, "tracking.in_transit", new Date(ctx.clock.now()));
  expect(await worker.runOnce()).toBe(1);
  const [warn] = parsed().filter((l) => l.level === "warn");
  expect(warn).toMatchObject({
    msg: "webhook delivery attempt failed",
    webhook_id: w.id,
    attempt: 1,
    error: "connect",
    next_attempt_at: expect.any(String),
  });
  expect(warn!.status).toBeUndefined();
});
