/** The overview page's reads (docs/dashboard.md): delivery health, shipments by state, month-end usage projection. */
import { and, eq, gte, isNotNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { deliveries, follows, shipments, webhooks } from "../../db/schema/index.ts";

/** Finished deliveries in a window: `failed` = abandoned after the last attempt or dropped by the address check. */
export interface Outcomes {
  delivered: number;
  failed: number;
}

interface FailingWebhook extends Outcomes {
  id: string;
  url: string;
  status: string;
}

export interface DeliveryHealth {
  d7: Outcomes;
  d30: Outcomes;
  /** Webhooks with at least one failed delivery in the last 7 days, most failures first. */
  failing: FailingWebhook[];
}

const DAY_MS = 86_400_000;

/** Delivered / failed over the last 7 and 30 days (by the time enqueued; pending ones are not counted yet). */
export async function deliveryHealth(db: Db, accountId: string, nowMs: number): Promise<DeliveryHealth> {
  // An ISO string cast in SQL: a raw Date inside a `sql` fragment reaches the driver without a column type.
  const since7 = sql`${new Date(nowMs - 7 * DAY_MS).toISOString()}::timestamptz`;
  const rows = await db
    .select({
      id: webhooks.id,
      url: webhooks.url,
      status: webhooks.status,
      delivered30: sql<number>`count(*) filter (where ${deliveries.state} = 'delivered')::int`,
      failed30: sql<number>`count(*) filter (where ${deliveries.state} in ('abandoned', 'dropped'))::int`,
      delivered7: sql<number>`count(*) filter (where ${deliveries.state} = 'delivered' and ${deliveries.enqueuedAt} >= ${since7})::int`,
      failed7: sql<number>`count(*) filter (where ${deliveries.state} in ('abandoned', 'dropped') and ${deliveries.enqueuedAt} >= ${since7})::int`,
    })
    .from(deliveries)
    .innerJoin(webhooks, eq(webhooks.id, deliveries.webhookId))
    .where(and(eq(deliveries.accountId, accountId), gte(deliveries.enqueuedAt, new Date(nowMs - 30 * DAY_MS))))
    .groupBy(webhooks.id);
  const sum = (k: "delivered7" | "failed7" | "delivered30" | "failed30") => rows.reduce((a, r) => a + Number(r[k]), 0);
  const failing = rows
    .filter((r) => Number(r.failed7) > 0 || r.status === "deactivated")
    .map((r) => ({
      id: r.id,
      url: r.url,
      status: r.status,
      delivered: Number(r.delivered7),
      failed: Number(r.failed7),
    }))
    .sort((a, b) => b.failed - a.failed);
  return {
    d7: { delivered: sum("delivered7"), failed: sum("failed7") },
    d30: { delivered: sum("delivered30"), failed: sum("failed30") },
    failing,
  };
}

/** The account's followed shipments counted by state, most first. */
export async function shipmentsByState(db: Db, accountId: string): Promise<{ state: string; n: number }[]> {
  const rows = await db
    .select({ state: shipments.state, n: sql<number>`count(*)::int` })
    .from(follows)
    .innerJoin(shipments, eq(shipments.id, follows.shipmentId))
    .where(eq(follows.accountId, accountId))
    .groupBy(shipments.state);
  return rows
    .map((r) => ({ state: r.state, n: Number(r.n) }))
    .sort((a, b) => b.n - a.n || a.state.localeCompare(b.state));
}

/** Month-end use at the pace so far: `used` scaled to the whole UTC month (the quota resets at 00:00 UTC on the 1st). */
export function projectedMonthEnd(used: number, nowMs: number): number {
  const d = new Date(nowMs);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const elapsed = Math.max(nowMs - start, 3_600_000); // an hour at least: a projection from minutes is noise
  return Math.round((used * (end - start)) / elapsed);
}

/** The overview's "Needs action" panel: exceptions by failed-attempt reason, returned (RTO) and stalled shipments. */
export interface NeedsAction {
  /** Followed shipments now in `exception` with a reason (docs/ndr.md), most first. */
  reasons: { reason: string; n: number }[];
  returned: number;
  stalled: number;
}

/** The account's followed shipments that need the merchant's attention (one statement, plus {@link stalledShipments}). */
export async function needsAction(db: Db, accountId: string): Promise<NeedsAction> {
  const rows = await db
    .select({ state: shipments.state, reason: shipments.reasonCode, n: sql<number>`count(*)::int` })
    .from(follows)
    .innerJoin(shipments, eq(shipments.id, follows.shipmentId))
    .where(
      and(
        eq(follows.accountId, accountId),
        sql`(${shipments.state} = 'returned' or (${shipments.state} = 'exception' and ${shipments.reasonCode} is not null))`,
      ),
    )
    .groupBy(shipments.state, shipments.reasonCode);
  const reasons = rows.flatMap((r) =>
    r.state === "exception" && r.reason ? [{ reason: r.reason, n: Number(r.n) }] : [],
  );
  reasons.sort((a, b) => b.n - a.n || a.reason.localeCompare(b.reason));
  const returned = rows.filter((r) => r.state === "returned").reduce((a, r) => a + Number(r.n), 0);
  return { reasons, returned, stalled: await stalledShipments(db, accountId) };
}

/** Followed shipments flagged stalled (docs/predictions.md, "Stalled shipments"). */
async function stalledShipments(db: Db, accountId: string): Promise<number> {
  const [r] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(follows)
    .innerJoin(shipments, eq(shipments.id, follows.shipmentId))
    .where(and(eq(follows.accountId, accountId), isNotNull(shipments.stalledAt)));
  return Number(r?.n ?? 0);
}
