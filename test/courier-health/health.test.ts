/**
 * Courier health end to end on a real database: two processes count calls into the same minutes, both evaluate
 * every minute (fake clock), and a scripted outage gives degraded → down → operational with one event per
 * transition, sent only to the webhook that lists the courier events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { CallKind } from "../../src/domain/courier-health.ts";
import { CallBuckets } from "../../src/modules/courier-health/buckets.ts";
import { evaluateHealth, type Transition } from "../../src/modules/courier-health/evaluate.ts";
import { listIncidents } from "../../src/modules/courier-health/read.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { fanOutCourierEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

const MIN = 60_000;
let ctx: TestContext;
let other: ReturnType<typeof connect>;
let replica: CallBuckets;
let key: string;
let subscribed: string;
let unsubscribed: string;

beforeAll(async () => {
  ctx = await testContext();
  other = connect(ctx.tdb.url, { max: 4 });
  replica = new CallBuckets(other.db, ctx.clock);
  const a = await ctx.account("growth");
  key = a.key;
  const hook = async (events: string[]) => {
    const [res, body] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({ url: "https://example.com/hooks", events, mode: "live" }),
    });
    expect(res.status).toBe(201);
    return body.data.id as string;
  };
  subscribed = await hook(["courier.degraded", "courier.down", "courier.recovered"]);
  unsubscribed = await hook(["tracking.delivered"]);
  ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 30));
});

afterAll(async () => {
  await other.sql.end({ timeout: 5 });
  await ctx.close();
});

/** One minute of calls split over both processes, then both evaluate at the next minute. */
async function minute(kinds: Partial<Record<CallKind, number>>, ms = 300): Promise<Transition[]> {
  const local = ctx.deps.services.courierCalls;
  let i = 0;
  for (const [kind, n] of Object.entries(kinds) as [CallKind, number][])
    for (let k = 0; k < n; k++) (i++ % 2 ? replica : local).add("delhivery", kind, ms);
  await Promise.all([local.flush(), replica.flush()]);
  ctx.clock.advance(MIN);
  const [x, y] = await Promise.all([
    evaluateHealth(ctx.tdb.db, ctx.clock.now(), fanOutCourierEvent),
    evaluateHealth(other.db, ctx.clock.now(), fanOutCourierEvent),
  ]);
  return [...(x ?? []), ...(y ?? [])];
}

async function minutes(n: number, kinds: Partial<Record<CallKind, number>>): Promise<Transition[]> {
  const out: Transition[] = [];
  for (let i = 0; i < n; i++) out.push(...(await minute(kinds)));
  return out;
}

describe("buckets", () => {
  test("two processes counting the same minute add up in one row; a real sandbox lookup is counted by kind", async () => {
    const courier = courierBySlug("bluedart")!;
    await ctx.deps.backends.lookup(courier, "12345678901").catch(() => undefined);
    await ctx.deps.backends.lookup(courier, "12345678906").catch(() => undefined);
    replica.add("bluedart", "timeout", 20_000);
    await Promise.all([ctx.deps.services.courierCalls.flush(), replica.flush()]);
    const rows = await ctx.tdb.sql`select calls, kinds, latency from courier_call_buckets where courier = 'bluedart'`;
    expect(rows.length).toBe(1);
    expect(rows[0]!.calls).toBe(3);
    // CALL_KINDS order: ok, not_found, timeout, server_error, …
    expect(rows[0]!.kinds.slice(0, 4)).toEqual([1, 0, 1, 1]);
    expect(rows[0]!.latency.reduce((a: number, b: number) => a + b, 0)).toBe(3);
    await ctx.tdb.sql`delete from courier_call_buckets`;
  });
});

describe("an outage, scripted", () => {
  test("degraded, then down, then recovered: one event per transition, to the subscribed webhook only", async () => {
    expect(await minutes(1, { ok: 30 })).toEqual([]);
    const [, health0] = await ctx.call("/v1/couriers/delhivery/health", { key });
    expect(health0.data.state).toBe("operational");

    const degraded = await minutes(11, { ok: 24, timeout: 6 });
    expect(degraded.map((t) => t.event)).toEqual(["courier.degraded"]);
    const [res, body] = await ctx.call("/v1/couriers/delhivery/health", { key });
    expect(res.status).toBe(200);
    expect(body.data.state).toBe("degraded");
    expect(body.data.current.success_share).toBe(0.8);
    expect(body.data.current.shares.timeout).toBe(0.2);
    expect(body.data.windows["15m"].calls).toBe(30 * 12);
    expect(body.data.incident.transitions).toHaveLength(1);
    // While degraded, a tracking answer says so beside the spec's fields.
    await ctx.deps.services.courierHealth.refresh();
    const [tracked, answer] = await ctx.call("/v1/track?courier=delhivery&tracking_number=5555555555121", { key });
    expect(tracked.status).toBe(200);
    expect(answer.courier_warning).toMatchObject({ state: "degraded", since: body.data.since });
    expect(answer.courier_warning.message).toContain("Delhivery");
    expect(answer.data.ShipmentState).toBeString();

    const down = await minutes(20, { ok: 9, server_error: 21 });
    expect(down.map((t) => t.event)).toEqual(["courier.down"]);
    const up = await minutes(27, { ok: 30 });
    expect(up.map((t) => t.event)).toEqual(["courier.recovered"]);

    const rows = await ctx.tdb.sql`
      select webhook_id, event_type, sequence::int as sequence, event_id, synthetic_data from deliveries order by sequence`;
    expect(rows.map((r) => [r.webhook_id, r.event_type, r.sequence])).toEqual([
      [subscribed, "courier.degraded", 1],
      [subscribed, "courier.down", 2],
      [subscribed, "courier.recovered", 3],
    ]);
    expect(rows.some((r) => r.webhook_id === unsubscribed)).toBe(false);
    expect(rows[1]!.synthetic_data).toMatchObject({
      courier: "delhivery",
      state: "down",
      previous_state: "degraded",
      figures: { success_share: 0.3, shares: { server_error: 0.7 } },
    });
    expect(new Set(rows.map((r) => r.synthetic_data.incident_id)).size).toBe(1);

    const [incident] = await listIncidents(ctx.tdb.db, 0, 10, "delhivery");
    expect(incident!.state).toBe("down");
    expect(incident!.ended_at).not.toBeNull();
    expect(incident!.transitions.map((t) => t.event_id)).toEqual(rows.map((r) => r.event_id));

    const [, after] = await ctx.call("/v1/couriers/delhivery/health", { key });
    expect(after.data).toMatchObject({ state: "operational", incident: null });
    await ctx.deps.services.courierHealth.refresh();
    const [, list] = await ctx.call("/v1/couriers", { key });
    const item = list.data.couriers.find((c: { slug: string }) => c.slug === "delhivery");
    expect(item.health).toMatchObject({ state: "operational", success_share_15m: 1 });
    const [, calm] = await ctx.call("/v1/track?courier=delhivery&tracking_number=5555555555121", { key });
    expect(calm.courier_warning).toBeUndefined();
  }, 60_000);

  test("an unknown slug answers 404 with a suggestion; a key is required", async () => {
    const [res, body] = await ctx.call("/v1/couriers/delhivry/health", { key });
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("COURIER_NOT_FOUND");
    const [anon] = await ctx.call("/v1/couriers/delhivery/health");
    expect(anon.status).toBe(401);
  });
});
