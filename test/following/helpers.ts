/** Shared steps for the following tests: track through the API, seed followed rows, read events and the outbox. */
import { asc, eq, sql } from "drizzle-orm";
import { deliveries, events, follows, recheckChunks, recheckSchedule, shipments } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import type { TestContext } from "../helpers/app.ts";

/** Enough to be past a next check scheduled at interval + 10 % jitter (the lookup path uses Math.random). */
export const pastInterval = (ctx: TestContext) => Math.ceil(ctx.config.recheckIntervalSeconds * 1.1) * 1000;

/** `GET /v1/track` as `key`; expects 200. */
export async function track(ctx: TestContext, key: string, courier: string, n: string) {
  const [res, body] = await ctx.call(`/v1/track?courier=${courier}&tracking_number=${encodeURIComponent(n)}`, { key });
  if (res.status !== 200) throw new Error(`track ${courier} ${n}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** A live webhook (growth accounts pass the plan gate) subscribed to every event. */
export async function liveWebhook(ctx: TestContext, key: string): Promise<string> {
  const body = {
    url: "https://hooks.example.com/courier",
    events: [
      "tracking.updated",
      "tracking.in_transit",
      "tracking.out_for_delivery",
      "tracking.delivered",
      "tracking.exception",
    ],
    mode: "live",
  };
  const [res, b] = await ctx.call("/v1/webhooks", { key, method: "POST", body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(b)}`);
  return b.data.id;
}

/**
 * The stored shipment with its re-check schedule as `recheck_schedule` and its chunk hold it: `nextCheckAt` (the
 * row's own `due_at`, else its chunk's), `leaseUntil` and `leaseOwner` (the row's, else its chunk's) and
 * `recheckFailures` (its `failures`); null, null, null and 0 when the shipment is not scheduled.
 */
export async function shipmentRow(ctx: TestContext, courier: string, n: string) {
  const [r] = await ctx.tdb.db
    .select({ s: shipments, q: recheckSchedule, c: recheckChunks })
    .from(shipments)
    .leftJoin(recheckSchedule, eq(recheckSchedule.shipmentId, shipments.id))
    .leftJoin(recheckChunks, eq(recheckChunks.id, recheckSchedule.chunkId))
    .where(sql`${shipments.courier} = ${courier} and ${shipments.trackingNumber} = ${n}`);
  if (!r) return undefined;
  const chunk = r.q && r.q.dueAt === null ? r.c : null;
  const checked = [r.s.lastCheckedAt, r.q?.checkedAt, chunk?.lastRunAt].filter((d): d is Date => d != null);
  return {
    ...r.s,
    // The check time: `shipments` when the record changed, the schedule row when a lookup found nothing new, the
    // chunk's last run when a run of it did.
    lastCheckedAt: checked.length ? new Date(Math.max(...checked.map((d) => d.getTime()))) : null,
    nextCheckAt: r.q?.dueAt ?? chunk?.dueAt ?? null,
    leaseUntil: r.q?.leaseUntil ?? chunk?.leaseUntil ?? null,
    leaseOwner: r.q?.leaseOwner ?? chunk?.leaseOwner ?? null,
    recheckFailures: r.q?.failures ?? 0,
  };
}

/** Takes the shipments `ids` (all when omitted) off the re-check schedule, out of the way of the next test. */
export async function unscheduleRows(ctx: TestContext, ids?: readonly string[]): Promise<void> {
  if (ids) await ctx.tdb.sql`delete from recheck_schedule where shipment_id in ${ctx.tdb.sql(ids as string[])}`;
  else await ctx.tdb.sql`delete from recheck_schedule`;
}

/** Moves the due time of shipments `ids` on the re-check schedule to `atMs` (ms since the epoch): their own due time, which wins over their chunk's. */
export async function setDue(ctx: TestContext, ids: readonly string[], atMs: number): Promise<void> {
  await ctx.tdb
    .sql`update recheck_schedule set due_at = ${new Date(atMs).toISOString()} where shipment_id in ${ctx.tdb.sql(ids as string[])}`;
}

/** Events of one shipment in the order they were written: `type/status`. */
export async function eventsOf(ctx: TestContext, shipmentId: string): Promise<string[]> {
  const rows = await ctx.tdb.db.select().from(events).where(eq(events.shipmentId, shipmentId)).orderBy(asc(events.id));
  return rows.map((r) => `${r.type}/${r.status}`);
}

/** Outbox rows of one shipment, in event order. */
export async function outboxOf(ctx: TestContext, shipmentId: string) {
  return ctx.tdb.db
    .select()
    .from(deliveries)
    .where(eq(deliveries.shipmentId, shipmentId))
    .orderBy(asc(deliveries.eventId));
}

/**
 * A followed shipment stored as if already looked up (state pending, no
 * checkpoints), on the re-check schedule due now: for numbers `/v1/track` cannot store (digits 5, 6)
 * and for a first record that is still pending.
 */
export async function seedFollowed(
  ctx: TestContext,
  accountId: string,
  courier: string,
  n: string,
  nowMs = ctx.clock.now(),
): Promise<string> {
  return (await seedMany(ctx, accountId, [[courier, n]], nowMs))[0]!;
}

/** {@link seedFollowed} for many `[courier, number]` pairs in three statements. */
export async function seedMany(
  ctx: TestContext,
  accountId: string,
  pairs: readonly (readonly [string, string])[],
  nowMs = ctx.clock.now(),
): Promise<string[]> {
  const rows = pairs.map(([courier, n]) => ({
    id: newId("shp"),
    courier,
    trackingNumber: n,
    state: "pending",
    followers: 1,
    lastCheckedAt: new Date(nowMs),
  }));
  await ctx.tdb.db.insert(shipments).values(rows);
  await ctx.tdb.db.insert(follows).values(rows.map((r) => ({ accountId, shipmentId: r.id })));
  await ctx.tdb.db.insert(recheckSchedule).values(
    rows.map((r) => ({
      shipmentId: r.id,
      courier: r.courier,
      trackingNumber: r.trackingNumber,
      dueAt: new Date(nowMs),
    })),
  );
  return rows.map((r) => r.id);
}
