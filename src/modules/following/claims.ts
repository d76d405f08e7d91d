/**
 * The re-check claim and its outcome statements (graphile-worker / pg-boss
 * shape; a network call never runs inside the transaction that holds the claim): claim due shipments with a lease in ONE statement, record a
 * failure or give claims back with a second statement that only applies while
 * the lease is still ours. The runner in src/modules/following/recheck.ts
 * drives them; housekeeping tidies expired leases through
 * {@link releaseExpiredLeases}. They work on `recheck_queue` (the schedule,
 * one narrow row per scheduled shipment) and never touch `shipments`; they
 * live here because the following module is the one writer of both
 * (docs/spec-map.md, "Table owners").
 */
import type { Db } from "../../db/client.ts";

/** One claimed shipment, as returned by the claim statement. */
export interface ClaimedShipment {
  /** The shipment's id. */
  id: string;
  courier: string;
  tracking_number: string;
  /** Consecutive failed re-checks before this claim. */
  recheck_failures: number;
}

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
  // Timestamps travel as ISO text: drizzle turns postgres-js's Date serialisers off on this client.
  const now = new Date(nowMs).toISOString();
  const lease = new Date(nowMs + leaseMs).toISOString();
  const exclude = opts.excludeCouriers?.length ? sql`and courier not in ${sql(opts.excludeCouriers as string[])}` : sql``;
  const [oldest] = await sql`
    select (extract(epoch from due_at) * 1000)::float8 as ms from recheck_queue
    where due_at <= ${now} and (lease_until is null or lease_until <= ${now}) ${exclude}
    order by due_at limit 1`;
  if (!oldest) return [];
  const grid = GRIDS[bucketGrid(oldest.ms as number)];
  // Start of the bucket holding `now` (what date_bin returns for it).
  const bucketStart = new Date(nowMs - ((nowMs - grid.originMs) % DUE_BUCKET_MS)).toISOString();
  const bucket = sql.unsafe(grid.sql);
  // Why this shape (the cost of a claim must not grow with the number of shipments):
  // - The schedule is its own narrow table: a claim locks and stamps rows of about 100 bytes (about 55
  //   to a page at fillfactor 70) that hold nothing but the schedule, not rows of the wide `shipments`
  //   table (about 12 to a page), and never reads or writes `shipments`: courier and tracking_number
  //   are copies.
  // - Two walks, the second only if the first comes back short (Limit over Append stops pulling):
  //   `past` takes rows from 15-minute buckets that ended before now, oldest bucket first, through the
  //   grid's bucket index. Equal btree keys are kept in heap order, so the rows of one bucket
  //   are taken a page at a time: 1,000 rows of a backlog come from about 1,000 ÷ (rows of that bucket
  //   per page) pages, where exact due order would dirty one page per row. `cur` takes the current
  //   bucket's due rows in exact due order through recheck_queue_due_idx, so nothing due waits for its
  //   bucket to end.
  // - FOR UPDATE SKIP LOCKED: concurrent claimers (any number of processes) take disjoint rows instead
  //   of queueing on each other; a row locked by recordFetch (a /v1/track lookup rescheduling it) is
  //   skipped this round.
  // - The update writes only lease_until and lease_owner, which no index covers: a HOT update (no index
  //   entry written; the table's fillfactor leaves room on the page). A claimed row therefore stays in
  //   the due range while leased, and `lease_until <= now` skips it: later claims step over the rows
  //   held right now (bounded by maxHeld per process). When a claimer dies, its lease runs out and the
  //   same predicate makes the row claimable again: the stale-lease reset.
  // - `ctid = any(array(...))`: the locked rows are updated where they lie (a TID scan), with no
  //   primary-key probe per row (three index pages each, mostly outside shared_buffers on a large
  //   table). The rows stay locked until the statement ends, so their ctids cannot change under it. A
  //   row another transaction rescheduled after this statement started is locked in its new version,
  //   which this statement's snapshot does not see: it is left unclaimed this round, like a skipped one.
  const rows = await sql`
    update recheck_queue q
    set lease_until = ${lease}, lease_owner = ${owner}
    where q.ctid = any(array(
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
      limit ${limit}
    ))
    returning q.shipment_id as id, q.courier, q.tracking_number, q.failures as recheck_failures
  `;
  return rows as unknown as ClaimedShipment[];
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
export async function recordFailure(db: Db, id: string, owner: string, nextAtMs: number): Promise<boolean> {
  const rows = await db.$client`
    update recheck_queue
    set failures = failures + 1, due_at = ${new Date(nextAtMs).toISOString()},
        lease_until = null, lease_owner = null
    where shipment_id = ${id} and lease_owner = ${owner}
    returning shipment_id
  `;
  return rows.length > 0;
}

/**
 * Renews the leases `owner` still holds on `ids` until `leaseUntilMs` (ms since the epoch): the heartbeat of a
 * live runner (docs/rechecks.md, "Short leases, renewed"). Writes only the lease columns (HOT, like the claim).
 * Returns the ids renewed; a row missing from them is no longer ours (recorded by a lookup, or its lease
 * lapsed and another process claimed it).
 * @throws whatever the database throws.
 */
export async function renewClaims(db: Db, ids: readonly string[], owner: string, leaseUntilMs: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$client<{ id: string }[]>`
    update recheck_queue set lease_until = ${new Date(leaseUntilMs).toISOString()}
    where shipment_id = any(${ids as string[]}::text[]) and lease_owner = ${owner}
    returning shipment_id as id
  `;
  return rows.map((r) => r.id);
}

/**
 * Gives claimed rows back unprocessed (a stopping process): due again at
 * `nowMs` (ms since the epoch) so another replica picks them up at once instead of after the
 * lease. Only rows whose lease `owner` still holds. Returns the rows given back.
 * @throws whatever the database throws.
 */
export async function releaseClaims(db: Db, ids: readonly string[], owner: string, nowMs: number): Promise<number> {
  if (ids.length === 0) return 0;
  const sql = db.$client;
  const rows = await sql`
    update recheck_queue set due_at = ${new Date(nowMs).toISOString()}, lease_until = null, lease_owner = null
    where shipment_id in ${sql(ids as string[])} and lease_owner = ${owner}
    returning shipment_id
  `;
  return rows.length;
}

/**
 * Takes a claimed row out of the schedule (its courier left the catalogue or became lookup-only:
 * spec-map Decisions, Lookup-only couriers), only while `owner` holds its lease.
 * @throws whatever the database throws.
 */
export async function unschedule(db: Db, id: string, owner: string): Promise<void> {
  await db.$client`delete from recheck_queue where shipment_id = ${id} and lease_owner = ${owner}`;
}

/**
 * Clears leases that ran out (a process died mid re-check). The row is
 * already due again (a claim leaves due_at as it was and an expired
 * lease no longer hides the row from claims), so this only tidies
 * `lease_owner`/`lease_until` and counts the dead claims.
 * The predicate on due_at keeps the scan on `recheck_queue_due_idx`.
 * `nowMs`: ms since the epoch. Returns the leases cleared.
 * @throws whatever the database throws.
 */
export async function releaseExpiredLeases(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const rows = await db.$client`
    update recheck_queue set lease_until = null, lease_owner = null
    where due_at <= ${now} and lease_until <= ${now}
    returning shipment_id
  `;
  return rows.length;
}
