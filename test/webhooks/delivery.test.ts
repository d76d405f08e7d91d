/**
 * The delivery worker end to end: real Postgres, real HTTPS receivers on
 * loopback, the FakeClock driving retries through `runOnce()` (no sleeps).
 * Hostile destinations are only ever named through the fake resolver and
 * refused before any socket opens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verify } from "@octokit/webhooks-methods";
import { eq } from "drizzle-orm";
import { deliveries, shipments, webhooks } from "../../src/db/schema/index.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { claimDue, recordOutcomes } from "../../src/modules/webhooks/delivery/outbox.ts";
import { MAX_PAYLOAD_BYTES } from "../../src/modules/webhooks/delivery/payload.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";
import { checkpoint, emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";
import { proxyStatements } from "../helpers/sql-proxy.ts";

/** Names for the tests; blocked ones are data only (the guard refuses them before connecting). */
const resolver: Resolver = async (host) => {
  const table: Record<string, string> = {
    "receiver.test": "127.0.0.1",
    "wrong-name.test": "127.0.0.1",
    "metadata.test": "169.254.169.254",
    "intranet.test": "10.0.0.7",
  };
  const a = table[host];
  if (!a) throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
  return [{ address: a, family: 4 }];
};

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "1,2,3,4,5" }));
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps, resolver });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

const now = () => new Date(ctx.clock.now());

/** A growth account with one live webhook at `path` (or `url`), following a fresh shipment. */
async function setup(opts: { path?: string; url?: string; events?: string[]; mode?: "live" | "test" } = {}) {
  const acc = await ctx.account("business");
  const path = opts.path ?? `/h-${acc.id}`;
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({
      url: opts.url ?? rx.url(path),
      events: opts.events ?? ["tracking.in_transit", "tracking.delivered", "tracking.updated"],
      mode: opts.mode ?? "live",
    }),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  return { acc, path, id: body.data.id as string, secret: body.data.secret as string, shp };
}

const webhookRow = async (id: string) => (await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id)))[0]!;

describe("a live delivery", () => {
  test("payload per the spec table, headers, and a signature verified independently and over the raw bytes", async () => {
    const s = await setup();
    ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 0, 750));
    expect(await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now())).toBe(1);
    expect(await worker.runOnce()).toBe(1);
    const [got] = rx.on(s.path);
    expect(got!.method).toBe("POST");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["x-webhook-event"]).toBe("tracking.in_transit");
    expect(got!.headers["x-webhook-delivery"]).toBe(`${s.id}-1`);
    expect(got!.headers["x-webhook-mode"]).toBe("live");
    const sig = got!.headers["x-service-signature"]!;
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(s.secret, got!.text, sig)).toBe(true);
    expect(sig).toBe(`sha256=${createHmac("sha256", s.secret).update(got!.raw).digest("hex")}`);
    expect(await verify(`${s.secret}x`, got!.text, sig)).toBe(false);
    expect(got!.json).toEqual({
      event: "tracking.in_transit",
      enqueued_at: "2026-11-05T10:00:00Z",
      sequence: 1,
      data: {
        tracking_number: expect.any(String),
        courier: "delhivery",
        reference: null,
        metadata: {},
        // The fixture's follow was written directly, so no public link was issued for it yet.
        public_url: null,
        status: "in_transit",
        most_recent_status: "In transit",
        origin_city: "Mumbai",
        destination_city: "Pune",
        delivered_date: null,
        estimated_delivery_date: "",
        stalled: false,
        checkpoints: [
          {
            activity: "Reached hub",
            checkpoint_state: "in_transit",
            courier_name: "Delhivery",
            date: "04-Nov-2026",
            time: "18:40",
            location: "Mumbai to Pune",
            reason_code: "",
          },
          {
            activity: "Picked up",
            checkpoint_state: "in_transit",
            courier_name: "Delhivery",
            date: "03-Nov-2026",
            time: "09:15",
            location: "Mumbai",
            reason_code: "",
          },
        ],
        enqueued_at: "2026-11-05T10:00:00Z",
      },
    });
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "delivered", attempts: 1, lastStatusCode: 200, nextAttemptAt: null });
  });

  test("only live, active, subscribed webhooks of following accounts get rows; test webhooks never get real events", async () => {
    const s = await setup({ events: ["tracking.delivered"] });
    expect(await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now())).toBe(0);
    const t = await setup({ mode: "test" });
    expect(await emit(ctx.tdb.db, t.shp, "tracking.in_transit", now())).toBe(0);
    const stranger = await setup();
    const other = await shipment(ctx.tdb.db, []);
    expect(await emit(ctx.tdb.db, other, "tracking.in_transit", now())).toBe(0);
    expect(await emit(ctx.tdb.db, stranger.shp, "tracking.in_transit", now())).toBe(1);
    await worker.runOnce();
  });

  test("after a rotation, new deliveries verify only with the new secret", async () => {
    const s = await setup();
    const [, rot] = await ctx.call("/v1/webhooks/rotate-secret", { key: s.acc.key, method: "POST" });
    const fresh = rot.data.secret as string;
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const got = rx.on(s.path).at(-1)!;
    const sig = got.headers["x-service-signature"]!;
    expect(await verify(fresh, got.text, sig)).toBe(true);
    expect(await verify(s.secret, got.text, sig)).toBe(false);
  });

  test("payload over 256 KiB is sent with checkpoints null", async () => {
    const s = await setup();
    const many = Array.from({ length: 1200 }, (_, i) =>
      checkpoint("in_transit", "2026-11-04", `${String(i % 24).padStart(2, "0")}:00`, "x".repeat(250)),
    );
    await ctx.tdb.db.update(shipments).set({ checkpoints: many }).where(eq(shipments.id, s.shp));
    await emit(ctx.tdb.db, s.shp, "tracking.updated", now());
    await worker.runOnce();
    const got = rx.on(s.path).at(-1)!;
    expect(got.raw.byteLength).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(got.json.data.checkpoints).toBeNull();
    expect(await verify(s.secret, got.text, got.headers["x-service-signature"]!)).toBe(true);
  });

  test("DNS pinning: a name that does not resolve in real DNS reaches the receiver at the vetted address", async () => {
    const s = await setup({ url: `https://receiver.test:${rx.port}/pinned` });
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const got = rx.on("/pinned");
    expect(got).toHaveLength(1);
    expect(got[0]!.headers.host).toBe(`receiver.test:${rx.port}`);
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d!.state).toBe("delivered");
  });

  test("TLS with a wrong name fails (and is retried), never delivered", async () => {
    const s = await setup({ url: `https://wrong-name.test:${rx.port}/wrong` });
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    expect(rx.on("/wrong")).toHaveLength(0);
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "pending", attempts: 1, lastError: "tls" });
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  });
});

describe("retries, abandonment and the failure count", () => {
  test("schedule 1,2,3,4,5 s on the fake clock; X-Webhook-Delivery -1…-6; abandoned after the 6th; data rebuilt per attempt", async () => {
    const s = await setup();
    rx.route(s.path, () => new Response("down", { status: 503 }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    expect(await worker.runOnce()).toBe(1);
    for (const wait of [1, 2, 3, 4, 5]) {
      ctx.clock.advance(wait * 1000 - 1);
      expect(await worker.runOnce()).toBe(0); // not due a millisecond early
      if (wait === 3)
        await ctx.tdb.db
          .update(shipments)
          .set({ state: "out_for_delivery", mostRecentStatus: "Out for delivery" })
          .where(eq(shipments.id, s.shp));
      ctx.clock.advance(1);
      expect(await worker.runOnce()).toBe(1);
    }
    ctx.clock.advance(86_400_000);
    expect(await worker.runOnce()).toBe(0);
    const got = rx.on(s.path);
    expect(got.map((r) => r.headers["x-webhook-delivery"])).toEqual([1, 2, 3, 4, 5, 6].map((n) => `${s.id}-${n}`));
    // Same event identity on every attempt, data from the freshest record.
    expect(new Set(got.map((r) => r.json.enqueued_at)).size).toBe(1);
    expect(got.map((r) => r.json.data.status)).toEqual([
      "in_transit",
      "in_transit",
      "in_transit",
      "out_for_delivery",
      "out_for_delivery",
      "out_for_delivery",
    ]);
    for (const r of got) expect(await verify(s.secret, r.text, r.headers["x-service-signature"]!)).toBe(true);
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "abandoned", attempts: 6, lastStatusCode: 503, nextAttemptAt: null });
    expect((await webhookRow(s.id)).failureCount).toBe(1);
    const [, list] = await ctx.call(`/v1/webhooks/${s.id}/deliveries`, { key: s.acc.key });
    expect(list.data.deliveries[0].attempt_log.map((a: { attempt: number }) => a.attempt)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(list.data.deliveries[0].attempt_log[0]).toMatchObject({
      status_code: 503,
      response_snippet: "down",
      error: null,
    });
  });

  test("20 consecutive failed deliveries (address-check drops) deactivate, 19 do not; nothing more is enqueued; PUT reactivates; a success resets", async () => {
    const s = await setup({ url: "https://intranet.test/hook" });
    for (let i = 0; i < 20; i++) {
      expect(await emit(ctx.tdb.db, s.shp, "tracking.updated", now())).toBe(1);
      await worker.runOnce();
      // The rule as the Record statement applies it (spec: Delivery rules 4): the 19th failure leaves it active.
      if (i === 18) expect(await webhookRow(s.id)).toMatchObject({ status: "active", failureCount: 19 });
    }
    const w = await webhookRow(s.id);
    expect(w).toMatchObject({ status: "deactivated", failureCount: 20 });
    const drops = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(drops.every((d) => d.state === "dropped" && d.attempts === 1 && d.lastError === "address_blocked")).toBe(
      true,
    );
    expect(await emit(ctx.tdb.db, s.shp, "tracking.updated", now())).toBe(0);

    const [res, body] = await ctx.call(`/v1/webhooks/${s.id}`, {
      key: s.acc.key,
      method: "PUT",
      body: JSON.stringify({ status: "active", url: rx.url(s.path) }),
    });
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({ status: "active", failure_count: 0 });

    // Two failures (dropped: host does not resolve), then a success resets the count.
    await ctx.tdb.db.update(webhooks).set({ url: "https://nowhere.test/x" }).where(eq(webhooks.id, s.id));
    for (let i = 0; i < 2; i++) {
      await emit(ctx.tdb.db, s.shp, "tracking.updated", now());
      await worker.runOnce();
    }
    expect((await webhookRow(s.id)).failureCount).toBe(2);
    await ctx.tdb.db
      .update(webhooks)
      .set({ url: rx.url(s.path) })
      .where(eq(webhooks.id, s.id));
    await emit(ctx.tdb.db, s.shp, "tracking.updated", now());
    await worker.runOnce();
    expect((await webhookRow(s.id)).failureCount).toBe(0);
  });

  test("an outcome recorded after its webhook was deactivated (while in flight) neither counts nor deactivates it again", async () => {
    const s = await setup();
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await emit(ctx.tdb.db, s.shp, "tracking.updated", now());
    const claimed = (await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000)).filter((c) => c.webhook_id === s.id);
    expect(claimed).toHaveLength(2);
    // Deactivated meanwhile (the 20th failure of another attempt, or its owner).
    await ctx.tdb.sql`update webhooks set status = 'deactivated', failure_count = 20 where id = ${s.id}`;
    const failed = {
      state: "abandoned" as const,
      attempts: 6,
      nextAttemptAt: null,
      statusCode: 503,
      error: "http_503",
      hops: [],
    };
    const r1 = await recordOutcomes(ctx.tdb.sql, [{ delivery: claimed[0]!, outcome: failed }], ctx.clock.now());
    expect([...r1.recorded]).toEqual([claimed[0]!.id]);
    expect(r1.deactivated).toEqual([]);
    expect(await webhookRow(s.id)).toMatchObject({ status: "deactivated", failureCount: 20 });
    // A late success does not reset it either: reactivating (PUT status active) does.
    const ok = {
      state: "delivered" as const,
      attempts: 1,
      nextAttemptAt: null,
      statusCode: 200,
      error: null,
      hops: [],
    };
    const r2 = await recordOutcomes(ctx.tdb.sql, [{ delivery: claimed[1]!, outcome: ok }], ctx.clock.now());
    expect([...r2.recorded]).toEqual([claimed[1]!.id]);
    expect(await webhookRow(s.id)).toMatchObject({ status: "deactivated", failureCount: 20 });
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  });

  test("a deleted webhook's pending deliveries stop", async () => {
    const s = await setup();
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await ctx.call(`/v1/webhooks/${s.id}`, { key: s.acc.key, method: "DELETE" });
    await worker.runOnce();
    expect(rx.on(s.path)).toHaveLength(0);
  });

  test("a worker killed mid-send: once its lease runs out the delivery is attempted again (at-least-once)", async () => {
    const s = await setup();
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    const claimed = await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000); // the "dead" worker's claim
    expect(claimed.map((c) => c.webhook_id)).toContain(s.id);
    expect(await worker.runOnce()).toBe(0);
    ctx.clock.advance(60_001);
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(rx.on(s.path).map((r) => r.headers["x-webhook-delivery"])).toEqual([`${s.id}-1`]);
  });

  test("two workers share the due rows without sending any twice", async () => {
    const s = await setup();
    for (let i = 0; i < 30; i++) await emit(ctx.tdb.db, s.shp, "tracking.updated", now());
    const w2 = createDeliveryWorker({ ...ctx.deps, resolver, concurrency: 4 });
    const [a, b] = await Promise.all([worker.runOnce(), w2.runOnce()]);
    await w2.stop();
    expect(a + b).toBe(30);
    expect(rx.on(s.path)).toHaveLength(30);
  });
});

describe("redirects", () => {
  test.each([301, 302, 303])("%i: re-sent as GET without a body; the 2xx counts as delivered", async (code) => {
    const s = await setup();
    rx.route(s.path, () => new Response(null, { status: code, headers: { location: `/moved-${code}` } }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const [moved] = rx.on(`/moved-${code}`);
    expect(moved!.method).toBe("GET");
    expect(moved!.raw.byteLength).toBe(0);
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "delivered", lastStatusCode: 200 });
    const [, list] = await ctx.call(`/v1/webhooks/${s.id}/deliveries`, { key: s.acc.key });
    expect(list.data.deliveries[0].attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([200, code]);
  });

  test.each([307, 308])("%i: the signed body is sent on to the target", async (code) => {
    const s = await setup();
    rx.route(s.path, () => new Response(null, { status: code, headers: { location: rx.url(`/kept-${code}`) } }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const [first] = rx.on(s.path);
    const [kept] = rx.on(`/kept-${code}`);
    expect(kept!.method).toBe("POST");
    expect(kept!.text).toBe(first!.text);
    expect(await verify(s.secret, kept!.text, kept!.headers["x-service-signature"]!)).toBe(true);
  });

  test("a redirect to a blocked address is dropped before connecting", async () => {
    const s = await setup();
    rx.route(
      s.path,
      () => new Response(null, { status: 307, headers: { location: "https://metadata.test/latest/meta-data" } }),
    );
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "dropped", lastError: "address_blocked" });
    expect((await webhookRow(s.id)).failureCount).toBe(1);
  });

  test("a redirect loop stops after 5 redirects and is retried", async () => {
    const s = await setup();
    rx.route(s.path, () => new Response(null, { status: 308, headers: { location: s.path } }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    expect(rx.on(s.path)).toHaveLength(6);
    const [d] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.id));
    expect(d).toMatchObject({ state: "pending", attempts: 1, lastError: "redirect_limit" });
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  });
});

describe("hostile receivers", () => {
  test("NUL bytes in a response body are left out of the logged snippet (PostgreSQL text cannot hold them)", async () => {
    const s = await setup();
    rx.route(s.path, () => new Response("ok\u0000 \u0000done"));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const [, list] = await ctx.call(`/v1/webhooks/${s.id}/deliveries`, { key: s.acc.key });
    expect(list.data.deliveries[0].state).toBe("delivered");
    expect(list.data.deliveries[0].attempt_log[0].response_snippet).toBe("ok done");
  });

  test("a 100 MB response is never read past the 2 KB cap", async () => {
    const s = await setup();
    let served = 0;
    rx.route(s.path, () => {
      const chunk = new Uint8Array(64 * 1024).fill(65);
      return new Response(
        new ReadableStream({
          pull(c) {
            if (served >= 100 * 1024 * 1024) return c.close();
            served += chunk.byteLength;
            c.enqueue(chunk);
          },
        }),
        { headers: { "content-length": String(100 * 1024 * 1024) } },
      );
    });
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
    await worker.runOnce();
    const [, list] = await ctx.call(`/v1/webhooks/${s.id}/deliveries`, { key: s.acc.key });
    expect(list.data.deliveries[0].state).toBe("delivered");
    expect(list.data.deliveries[0].attempt_log[0].response_snippet).toBe("A".repeat(2048));
    expect(served).toBeLessThan(100 * 1024 * 1024);
  });

  test("a receiver that never answers times out (WEBHOOK_TIMEOUT_MS) and is retried", async () => {
    const slow = await testContext(await webhookEnv({ WEBHOOK_TIMEOUT_MS: "300" }));
    const w = createDeliveryWorker({ ...slow.deps, resolver });
    try {
      const acc = await slow.account("business");
      const path = `/stall-${acc.id}`;
      rx.route(path, () => new Promise<Response>(() => {}));
      const [, c] = await slow.call("/v1/webhooks", {
        key: acc.key,
        method: "POST",
        body: JSON.stringify({ url: rx.url(path), events: ["tracking.updated"], mode: "live" }),
      });
      const shp = await shipment(slow.tdb.db, [acc.id]);
      await emit(slow.tdb.db, shp, "tracking.updated", new Date(slow.clock.now()));
      await w.runOnce();
      const [d] = await slow.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, c.data.id));
      expect(d).toMatchObject({ state: "pending", attempts: 1, lastError: "timeout", lastStatusCode: null });
    } finally {
      await w.stop();
      await slow.close();
    }
  });
});

describe("start(): woken by NOTIFY", () => {
  test("the first attempt goes out after commit without runOnce and without the poll", async () => {
    // The worker owns no timer (the scheduler polls it): after start() only a NOTIFY can wake it.
    const w = createDeliveryWorker({ ...ctx.deps, resolver });
    await w.start();
    try {
      const s = await setup();
      await emit(ctx.tdb.db, s.shp, "tracking.delivered", now());
      const [got] = await rx.waitFor(s.path, 1, 10_000);
      expect(got!.headers["x-webhook-event"]).toBe("tracking.delivered");
    } finally {
      await w.stop({ timeout: 5000 });
    }
  });
});

describe("the scheduler's delivery job", () => {
  const state = async (webhookId: string) =>
    (await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, webhookId)))[0]!;

  test("a retry coming due (no NOTIFY) goes out only through the scheduler's poll; the bare worker has no timer", async () => {
    // No timer: nothing in the files that decide when the worker claims arms one. Its wake-ups are a NOTIFY,
    // poll() (the scheduler's job) and a finishing attempt; the rest of this test shows the last two at work.
    for (const file of ["worker.ts", "../../../jobs/runner.ts", "outbox.ts", "outcome-batcher.ts"]) {
      const text = readFileSync(join(import.meta.dir, "../../src/modules/webhooks/delivery", file), "utf8");
      expect(text, file).not.toMatch(/\b(setTimeout|setInterval|Bun\.sleep|new Cron)\s*\(/);
    }
    const s = await setup();
    rx.route(s.path, (_req, _url, n) => new Response(n === 1 ? "down" : "ok", { status: n === 1 ? 503 : 200 }));
    // Every claim statement the worker sends is counted.
    let claims = 0;
    const sql = proxyStatements(ctx.tdb.sql, (send, strings) => {
      if (strings.join("").includes("from delivery_queue q")) claims++;
      return send();
    });
    const w = createDeliveryWorker({ ...ctx.deps, resolver, sql });
    await w.start();
    try {
      await emit(ctx.tdb.db, s.shp, "tracking.in_transit", now());
      await rx.waitFor(s.path, 1, 10_000);
      // The 503 is recorded: retry 1 is scheduled a second later.
      expect(await eventually(async () => (await state(s.id)).attempts === 1)).toBe(true);
      const before = claims;
      ctx.clock.advance(1_000); // retry 1 is due now; nothing notifies
      expect(await state(s.id)).toMatchObject({ state: "pending", attempts: 1 });
      expect(rx.on(s.path)).toHaveLength(1);
      expect(claims).toBe(before);
      await w.poll(); // what the scheduler's job calls
      expect(claims).toBe(before + 1);
      expect((await rx.waitFor(s.path, 2, 10_000))[1]!.headers["x-webhook-delivery"]).toBe(`${s.id}-2`);
    } finally {
      await w.stop({ timeout: 5_000 });
    }

    const s2 = await setup();
    rx.route(s2.path, (_req, _url, n) => new Response(n === 1 ? "down" : "ok", { status: n === 1 ? 503 : 200 }));
    const scheduler = createScheduler(ctx.deps, {
      jobs: ["delivery"],
      deliveryPattern: "* * * * * *",
      delivery: { resolver },
    });
    await scheduler.start();
    try {
      await emit(ctx.tdb.db, s2.shp, "tracking.in_transit", now());
      await rx.waitFor(s2.path, 1, 10_000);
      expect(await eventually(async () => (await state(s2.id)).attempts >= 1)).toBe(true);
      ctx.clock.advance(1_000);
      const got = await rx.waitFor(s2.path, 2, 5_000);
      expect(got[1]!.headers["x-webhook-delivery"]).toBe(`${s2.id}-2`);
    } finally {
      await scheduler.stop({ timeout: 5_000 });
    }
    expect(await state(s2.id)).toMatchObject({ state: "delivered", attempts: 2 });
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s2.id));
  }, 30_000);

  test("stop() waits for the attempt in flight and records it", async () => {
    const s = await setup();
    let answered = 0;
    const gate = Promise.withResolvers<void>();
    rx.route(s.path, async () => {
      await gate.promise;
      answered++;
      return new Response("ok");
    });
    const scheduler = createScheduler(ctx.deps, { jobs: ["delivery"], delivery: { resolver } });
    await scheduler.start();
    await emit(ctx.tdb.db, s.shp, "tracking.delivered", now());
    await rx.waitFor(s.path, 1, 10_000);
    expect(answered).toBe(0); // in flight: the receiver answers only once stop() has been called
    const stopped = scheduler.stop({ timeout: 5_000 });
    gate.resolve();
    await stopped;
    expect(answered).toBe(1);
    expect(await state(s.id)).toMatchObject({ state: "delivered", attempts: 1 });
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  }, 30_000);
});

// One slot and room for four waiting rows whatever the rate: the first claim takes all three rows and
// comes back short, so the pump claims again only on a wake-up (the tests' poll), not when a slot frees.
describe("the pump: claimed rows waiting for a slot", () => {
  const rowsOf = async (webhookId: string) =>
    await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, webhookId));
  /**
   * A webhook whose receiver holds every request until `answer()`, and three due deliveries to it (committed before
   * any worker starts).
   */
  async function threeDue() {
    const s = await setup();
    const gate = Promise.withResolvers<void>();
    rx.route(s.path, async () => {
      await gate.promise;
      return new Response("ok");
    });
    for (const type of ["tracking.in_transit", "tracking.updated", "tracking.delivered"] as const)
      await emit(ctx.tdb.db, s.shp, type, now());
    return { ...s, answer: () => gate.resolve() };
  }
  const until = async (what: () => Promise<boolean>) => {
    if (!(await eventually(what, 10_000))) throw new Error("condition not reached");
  };

  test("stop() sends none of them and clears their leases, so any worker claims them at once", async () => {
    const s = await threeDue();
    const w = createDeliveryWorker({ ...ctx.deps, resolver, concurrency: 1, prefetch: 4, minPrefetch: 4 });
    await w.start();
    await rx.waitFor(s.path, 1, 10_000);
    // The first attempt is still running when stop() is called; it is answered after.
    const stopped = w.stop({ timeout: 5_000 });
    s.answer();
    await stopped;
    expect(rx.on(s.path)).toHaveLength(1);
    const rows = await rowsOf(s.id);
    expect(rows.filter((r) => r.state === "delivered" && r.attempts === 1)).toHaveLength(1);
    const waiting = rows.filter((r) => r.state === "pending");
    expect(waiting).toHaveLength(2);
    for (const r of waiting) expect(r).toMatchObject({ attempts: 0, leaseUntil: null });
    expect(await claimDue(ctx.tdb.sql, ctx.clock.now(), 10, 60_000)).toHaveLength(2);
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  }, 30_000);

  test("a row that waited longer than half the lease slack is released unsent, then sent once after the next poll", async () => {
    const s = await threeDue();
    const w = createDeliveryWorker({ ...ctx.deps, resolver, concurrency: 1, prefetch: 4, minPrefetch: 4 });
    await w.start();
    try {
      await rx.waitFor(s.path, 1, 10_000);
      // The first attempt still runs (held); the two waiting rows now waited past LEASE_SLACK_SECONDS / 2.
      ctx.clock.advance((ctx.deps.config.leaseSlackSeconds * 1000) / 2 + 1);
      // Its answer frees the slot: the waiting rows are released unsent, not sent.
      s.answer();
      await until(
        async () => (await rowsOf(s.id)).filter((r) => r.state === "pending" && r.leaseUntil === null).length === 2,
      );
      expect(rx.on(s.path)).toHaveLength(1);
      await w.poll();
      await rx.waitFor(s.path, 3, 10_000);
      await until(async () => (await rowsOf(s.id)).every((r) => r.state === "delivered"));
      expect((await rowsOf(s.id)).map((r) => r.attempts)).toEqual([1, 1, 1]);
      expect(rx.on(s.path)).toHaveLength(3);
    } finally {
      s.answer();
      await w.stop({ timeout: 5_000 });
    }
    await ctx.tdb.db.delete(webhooks).where(eq(webhooks.id, s.id));
  }, 30_000);
});
