/**
 * The re-check queue on the claim engine (src/db/queue.ts): `recheck_queue` (the schedule, one narrow row per
 * scheduled shipment) with its own claim walk, which keeps a claim's cost flat as the table grows. The runner in
 * recheck.ts drives these; housekeeping tidies expired leases. They never touch `shipments`; they live here
 * because the following module is the one writer of both (docs/spec-map.md, "Table owners").
 */
import type { Db } from "../../db/client.ts";
import { defineQueue, frag, raw, run } from "../../db/queue.ts";

/** One claimed shipment, as returned by the claim statement. */
export interface ClaimedShipment {
  /** The shipment's id. */
  id: string;
  courier: string;
  tracking_number: string;
  /** Consecutive failed re-checks before this claim. */
  recheck_failures: number;
}

/** The re-check schedule as a queue table: claims return the shipment and its failures so far. */
export const recheckQueue = defineQueue<ClaimedShipment>("recheck_queue", {
  key: "shipment_id",
  failures: "failures",
  returning: "q.shipment_id as id, q.courier, q.tracking_number, q.failures as recheck_failures",
});

/**
 * Width of the due buckets an overdue backlog is claimed in. Rows of one bucket are taken in storage
 * order, not in exact due order: 15 minutes is well inside the schedule's own ± 10 % jitter at the
 * default 8-hour interval (spec "What the service does": re-checks on a schedule; RECHECK_INTERVAL_SECONDS).
 */
export const DUE_BUCKET_MS = 15 * 60_000;
/**
 * The two bucket grids: origins in ms since the epoch, and their expressions, which must be those of
 * `recheck_queue_due_bucket_idx` and `recheck_queue_due_bucket_offset_idx` (migration 0010): the planner
 * matches them. The second grid is offset by half a bucket (see {@link bucketGrid}).
 */
const GRIDS = [
  { originMs: Date.UTC(2000, 0, 1), sql: "date_bin('15 minutes', due_at, timestamptz '2000-01-01 00:00:00+00')" },
  { originMs: Date.UTC(2000, 0, 1) + DUE_BUCKET_MS / 2, sql: "date_bin('15 minutes', due_at, timestamptz '2000-01-01 00:07:30+00')" },
] as const;

/**
 * The grid (0 or 1) a claim walks: the one in which the oldest claimable row, due at `oldestMs` (ms since
 * the epoch), sits in the first half of its bucket, so that the oldest bucket holds at least 7.5 minutes of
 * due times. With one grid, a backlog that began just before a bucket boundary makes its oldest bucket a
 * thin slice of due times, one or two rows to a page, and each claim of it touches up to a page per row
 * (docs/rechecks.md, "Two bucket grids").
 */
export function bucketGrid(oldestMs: number): 0 | 1 {
  return (oldestMs - GRIDS[0].originMs) % DUE_BUCKET_MS < DUE_BUCKET_MS / 2 ? 0 : 1;
}

/**
 * Claims up to `limit` shipments due at `nowMs` for `leaseMs`, in one statement on `recheck_queue` (after
 * one read of the oldest claimable due time, which picks the bucket grid and skips the claim when nothing is due).
 * Units: `nowMs` ms since the epoch; `leaseMs` ms. `owner` names the claiming
 * process (kept in `lease_owner`, checked again when a failure is recorded).
 * `excludeCouriers`: courier slugs not to claim now (their lane is full).
 * @throws whatever the database throws (nothing is claimed then).
 */
export async function claimDueShipments(db: Db, nowMs: number, limit: number, leaseMs: number, owner: string, opts: { excludeCouriers?: readonly string[] } = {}): Promise<ClaimedShipment[]> {
  const sql = db.$client;
  const now = new Date(nowMs).toISOString();
  const exclude = opts.excludeCouriers?.length ? frag`and courier not in ${sql(opts.excludeCouriers as string[])}` : raw("");
  const [oldest] = await run(sql, frag`
    select (extract(epoch from due_at) * 1000)::float8 as ms from recheck_queue
    where due_at <= ${now} and (lease_until is null or lease_until <= ${now}) ${exclude}
    order by due_at limit 1`);
  if (!oldest) return [];
  const grid = GRIDS[bucketGrid(oldest.ms as number)];
  // Start of the bucket holding `now` (what date_bin returns for it).
  const bucketStart = new Date(nowMs - ((nowMs - grid.originMs) % DUE_BUCKET_MS)).toISOString();
  const bucket = raw(grid.sql);
  // Why this walk (the cost of a claim must not grow with the number of shipments):
  // - The schedule is its own narrow table: a claim locks and stamps rows of about 100 bytes (about 55
  //   to a page at fillfactor 70), not rows of the wide `shipments` table (about 12 to a page).
  // - Two walks, the second only if the first comes back short (Limit over Append stops pulling):
  //   `past` takes rows from 15-minute buckets that ended before now, oldest bucket first, through the
  //   grid's bucket index. Equal btree keys are kept in heap order, so the rows of one bucket are taken
  //   a page at a time, where exact due order would dirty one page per row. `cur` takes the current
  //   bucket's due rows in exact due order through recheck_queue_due_idx, so nothing due waits for its
  //   bucket to end.
  // - A row locked by recordFetch (a /v1/track lookup rescheduling it) is skipped this round; one another
  //   transaction rescheduled after this statement started is locked in a version this snapshot does not
  //   see: left unclaimed this round, like a skipped one.
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

/**
 * Records a failed re-check (a courier timeout, 5xx, throttling, missing
 * credentials, "no record"): the shipment record stays as it was and no
 * event is written (a transient failure changes nothing and emits nothing); the queue row's `failures`
 * goes up by one and the next check is `nextAtMs` (ms since the epoch). Only while `owner` holds the
 * lease: a lookup that recorded meanwhile already cleared the lease and rescheduled, and its result wins;
 * a lease that lapsed and was claimed by another process names that process. (An owner names one runner
 * of one process, and a runner never holds a row twice: recheck-lanes.ts.)
 * Returns false when the lease was no longer ours (nothing written).
 * @throws whatever the database throws.
 */
export function recordFailure(db: Db, id: string, owner: string, nextAtMs: number): Promise<boolean> {
  return recheckQueue.fail(db.$client, id, owner, nextAtMs);
}

/**
 * Renews the leases `owner` still holds on `ids` until `leaseUntilMs` (ms since the epoch): the heartbeat of a
 * live runner (docs/rechecks.md, "Short leases, renewed"). Returns the ids renewed; a row missing from them is
 * no longer ours (recorded by a lookup, or its lease lapsed and another process claimed it).
 * @throws whatever the database throws.
 */
export function renewClaims(db: Db, ids: readonly string[], owner: string, leaseUntilMs: number): Promise<string[]> {
  return recheckQueue.renew(db.$client, ids, owner, leaseUntilMs);
}

/**
 * Gives claimed rows back unprocessed (a stopping process): due again at `nowMs` (ms since the epoch) so another
 * replica picks them up at once instead of after the lease. Only rows whose lease `owner` still holds. Returns the
 * rows given back.
 * @throws whatever the database throws.
 */
export function releaseClaims(db: Db, ids: readonly string[], owner: string, nowMs: number): Promise<number> {
  return recheckQueue.release(db.$client, ids, owner, nowMs);
}

/**
 * Takes a claimed row out of the schedule (its courier left the catalogue or became lookup-only:
 * spec-map Decisions, Lookup-only couriers), only while `owner` holds its lease.
 * @throws whatever the database throws.
 */
export async function unschedule(db: Db, id: string, owner: string): Promise<void> {
  await recheckQueue.complete(db.$client, [id], owner);
}

/**
 * Clears leases that ran out (a process died mid re-check). The row is already due again (an expired lease no
 * longer hides it from claims), so this only tidies `lease_owner`/`lease_until` and counts the dead claims.
 * `nowMs`: ms since the epoch. Returns the leases cleared.
 * @throws whatever the database throws.
 */
export function releaseExpiredLeases(db: Db, nowMs: number): Promise<number> {
  return recheckQueue.expireLeases(db.$client, nowMs);
}
