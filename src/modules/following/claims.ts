/** The re-check queue (`recheck_queue`) on the claim engine, with a claim walk whose cost stays flat (docs/rechecks.md). */
import type { Db } from "../../db/client.ts";
import { frag, raw, run } from "../../db/fragment.ts";
import { defineQueue } from "../../db/queue.ts";

export interface ClaimedShipment {
  id: string;
  courier: string;
  tracking_number: string;
  recheck_failures: number;
}

export const recheckQueue = defineQueue<ClaimedShipment>("recheck_queue", {
  key: "shipment_id",
  failures: "failures",
  returning: "q.shipment_id as id, q.courier, q.tracking_number, q.failures as recheck_failures",
});

/** Width of the due buckets an overdue backlog is claimed in, ms (docs/rechecks.md, "One claim statement"). */
export const DUE_BUCKET_MS = 15 * 60_000;
/** The two bucket grids; each expression must equal its index's in migration 0010, or the planner misses it. */
const GRIDS = [
  { originMs: Date.UTC(2000, 0, 1), sql: "date_bin('15 minutes', due_at, timestamptz '2000-01-01 00:00:00+00')" },
  {
    originMs: Date.UTC(2000, 0, 1) + DUE_BUCKET_MS / 2,
    sql: "date_bin('15 minutes', due_at, timestamptz '2000-01-01 00:07:30+00')",
  },
] as const;

/** The grid (0 or 1) in whose first half-bucket `oldestMs` lies (docs/rechecks.md, "Two bucket grids"). */
export function bucketGrid(oldestMs: number): 0 | 1 {
  return (oldestMs - GRIDS[0].originMs) % DUE_BUCKET_MS < DUE_BUCKET_MS / 2 ? 0 : 1;
}

/** Claims up to `limit` rows due at `nowMs` for `leaseMs` (ms) under `owner`, skipping full lanes. @throws on DB errors. */
export async function claimDueShipments(
  db: Db,
  nowMs: number,
  limit: number,
  leaseMs: number,
  owner: string,
  opts: { excludeCouriers?: readonly string[] } = {},
): Promise<ClaimedShipment[]> {
  const sql = db.$client;
  const now = new Date(nowMs).toISOString();
  const exclude = opts.excludeCouriers?.length
    ? frag`and courier not in ${sql(opts.excludeCouriers as string[])}`
    : raw("");
  const [oldest] = await run(
    sql,
    frag`
    select (extract(epoch from due_at) * 1000)::float8 as ms from recheck_queue
    where due_at <= ${now} and (lease_until is null or lease_until <= ${now}) ${exclude}
    order by due_at limit 1`,
  );
  if (!oldest) return [];
  const grid = GRIDS[bucketGrid(oldest.ms as number)];
  const bucketStart = new Date(nowMs - ((nowMs - grid.originMs) % DUE_BUCKET_MS)).toISOString();
  const bucket = raw(grid.sql);
  // `past`: ended buckets, a page at a time; `cur`: exact due order (docs/rechecks.md, "Storage order").
  const candidates = frag`
      select ctid from (
        select ctid from recheck_queue
        where ${bucket} < ${bucketStart}
          and (lease_until is null or lease_until <= ${now})
          ${exclude}
        order by ${bucket}
        limit ${limit}
        for update skip locked
      ) past
      union all
      select ctid from (
        select ctid from recheck_queue
        where due_at >= ${bucketStart} and due_at <= ${now}
          and (lease_until is null or lease_until <= ${now})
          ${exclude}
        order by due_at
        limit ${limit}
        for update skip locked
      ) cur
      limit ${limit}`;
  return recheckQueue.claim(sql, { nowMs, limit, leaseMs, owner, candidates });
}

/** Records a failed re-check (docs/rechecks.md, "Courier failures"); false when `owner` lost the lease. @throws on DB errors. */
export function recordFailure(db: Db, id: string, owner: string, nextAtMs: number): Promise<boolean> {
  return recheckQueue.fail(db.$client, id, owner, nextAtMs);
}

/** Renews `owner`'s leases on `ids` until `leaseUntilMs`; returns the ids renewed. @throws on DB errors. */
export function renewClaims(db: Db, ids: readonly string[], owner: string, leaseUntilMs: number): Promise<string[]> {
  return recheckQueue.renew(db.$client, ids, owner, leaseUntilMs);
}

/** Gives `owner`'s claimed rows back, due at `nowMs` (ms since the epoch); returns the count. @throws on DB errors. */
export function releaseClaims(db: Db, ids: readonly string[], owner: string, nowMs: number): Promise<number> {
  return recheckQueue.release(db.$client, ids, owner, nowMs);
}

/** Takes `owner`'s claimed row out of the schedule (spec-map Decisions, Lookup-only couriers). @throws on DB errors. */
export async function unschedule(db: Db, id: string, owner: string): Promise<void> {
  await recheckQueue.complete(db.$client, [id], owner);
}

/** Tidies leases that ran out before `nowMs` (ms since the epoch); returns the count. @throws on DB errors. */
export function releaseExpiredLeases(db: Db, nowMs: number): Promise<number> {
  return recheckQueue.expireLeases(db.$client, nowMs);
}
