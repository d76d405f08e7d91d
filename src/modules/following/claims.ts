/**
 * The re-check claims (docs/rechecks.md): `recheck_queue` below layout level 2 on the claim engine, with a walk whose
 * cost stays flat; from level 2 due chunks (chunk-walk.ts) and rows due on their own (`recheck_schedule.due_at`).
 */
import type { Db } from "../../db/client.ts";
import { frag, raw, run } from "../../jobs/fragment.ts";
import { defineQueue, type Queue } from "../../jobs/queue.ts";
import { legacyLayout } from "./layout.ts";
import { ChunkWalk, chunkQueue, type ClaimedShipment } from "./chunk-walk.ts";

export type { ClaimedShipment };

const recheckQueue = defineQueue<ClaimedShipment>("recheck_queue", {
  key: "shipment_id",
  failures: "failures",
  returning: "q.shipment_id as id, q.courier, q.tracking_number, q.failures as recheck_failures",
});

/** Rows of the schedule from layout level 2 due on their own time (`due_at` set), claimed one by one. */
const recheckSchedule = defineQueue<ClaimedShipment>("recheck_schedule", {
  key: "shipment_id",
  failures: "failures",
  returning: "q.shipment_id as id, q.courier, q.tracking_number, q.failures as recheck_failures, null::bigint as chunk",
});

/** A `recheck_schedule` row (aliased `r`) is `token`'s: its own lease, or (a chunk member) its chunk's. */
const heldBy = (token: string) =>
  frag`(r.lease_owner = ${token} or (r.due_at is null and exists (
    select 1 from recheck_chunks c where c.id = r.chunk_id and c.lease_owner = ${token})))`;

/**
 * The lease statements over both schedules: a held row is in one of them, and a key that is in neither costs an
 * index probe and no write. The claim alone chooses its table (by layout level). A chunk's lease is renewed and
 * given back by its walk (chunk-walk.ts).
 */
export const scheduleQueues: Queue<ClaimedShipment> = {
  ...recheckSchedule,
  async complete(sql, ids, token) {
    const keys = ids as readonly string[];
    if (keys.length === 0) return 0;
    const gone = await run(
      sql,
      frag`delete from recheck_schedule r where r.shipment_id = any(${keys}::text[]) and ${heldBy(token)} returning 1`,
    );
    return gone.length + (await recheckQueue.complete(sql, ids, token));
  },
  async fail(sql, id, token, nextAtMs) {
    // A member that fails leaves its chunk's time for its own (the back-off) until its next success.
    const rows = await run(
      sql,
      frag`update recheck_schedule r set failures = r.failures + 1, due_at = ${new Date(nextAtMs).toISOString()},
        lease_until = null, lease_owner = null
      where r.shipment_id = ${id} and ${heldBy(token)} returning 1`,
    );
    return rows.length > 0 || recheckQueue.fail(sql, id, token, nextAtMs);
  },
  async release(sql, ids, token, nowMs) {
    return (
      (await recheckSchedule.release(sql, ids, token, nowMs)) + (await recheckQueue.release(sql, ids, token, nowMs))
    );
  },
  async renew(sql, ids, token, untilMs) {
    return [
      ...(await recheckSchedule.renew(sql, ids, token, untilMs)),
      ...(await recheckQueue.renew(sql, ids, token, untilMs)),
    ];
  },
  async expireLeases(sql, nowMs) {
    // A chunk keeps its cursor: the next run resumes after it.
    const chunks = await chunkQueue.expireLeases(sql, nowMs);
    return chunks + (await recheckSchedule.expireLeases(sql, nowMs)) + (await recheckQueue.expireLeases(sql, nowMs));
  },
};

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

/**
 * Claims up to `limit` shipments due at `nowMs` for `leaseMs` (ms) under `owner`, skipping full lanes: below layout
 * level 2 rows of `recheck_queue`; from it rows due on their own time first, then members of due chunks through
 * `walk` (a runner's, which tracks its chunks' runs; a fresh one by default). @throws on DB errors.
 */
export async function claimDueShipments(
  db: Db,
  nowMs: number,
  limit: number,
  leaseMs: number,
  owner: string,
  opts: { excludeCouriers?: readonly string[]; walk?: ChunkWalk } = {},
): Promise<ClaimedShipment[]> {
  const sql = db.$client;
  const now = new Date(nowMs).toISOString();
  const notExcluded = opts.excludeCouriers?.length
    ? frag`courier not in ${sql(opts.excludeCouriers as string[])}`
    : undefined;
  const exclude = notExcluded ? frag`and ${notExcluded}` : raw("");
  if (!(await legacyLayout(db))) {
    const own = await recheckSchedule.claim(sql, {
      nowMs,
      limit,
      leaseMs,
      owner,
      where: notExcluded,
    });
    if (own.length >= limit) return own;
    const walk = opts.walk ?? new ChunkWalk(db, owner, { intervalMs: 0 });
    const members = await walk.claim(nowMs, limit - own.length, leaseMs, opts.excludeCouriers ?? []);
    return [...own, ...members];
  }
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
  return scheduleQueues.fail(db.$client, id, owner, nextAtMs);
}

/** Gives `owner`'s claimed rows back, due at `nowMs` (ms since the epoch); returns the count. @throws on DB errors. */
export function releaseClaims(db: Db, ids: readonly string[], owner: string, nowMs: number): Promise<number> {
  return scheduleQueues.release(db.$client, ids, owner, nowMs);
}

/** Takes `owner`'s claimed row out of the schedule (spec-map Decisions, Lookup-only couriers). @throws on DB errors. */
export async function unschedule(db: Db, id: string, owner: string): Promise<void> {
  await scheduleQueues.complete(db.$client, [id], owner);
}

/** Tidies leases that ran out before `nowMs` (ms since the epoch); returns the count. @throws on DB errors. */
export function releaseExpiredLeases(db: Db, nowMs: number): Promise<number> {
  return scheduleQueues.expireLeases(db.$client, nowMs);
}

/**
 * The contract step's move (docs/rechecks.md, "Layout level 2"): what `recheck_queue` holds goes to
 * `recheck_schedule` (leases dropped: no 1.0.0 process runs any more), its check time from `shipments`. Run by
 * `admin contract` and by housekeeping once contracted (rows a process wrote in the ≤ 30 s before it saw the new
 * level). Returns the rows moved. @throws on DB errors
 */
export async function moveLegacySchedule(db: Db): Promise<number> {
  // Moved rows keep their own due time and join a chunk at their next check (docs/rechecks.md, "Re-checks in chunks").
  const rows = await db.$client`
    with moved as (delete from recheck_queue returning shipment_id, courier, tracking_number, due_at, failures)
    insert into recheck_schedule (shipment_id, courier, tracking_number, due_at, failures, checked_at)
    select m.shipment_id, m.courier, m.tracking_number, m.due_at, m.failures, s.last_checked_at
    from moved m join shipments s on s.id = m.shipment_id
    order by m.due_at
    on conflict (shipment_id) do update set due_at = excluded.due_at, failures = excluded.failures,
      checked_at = greatest(recheck_schedule.checked_at, excluded.checked_at), lease_until = null, lease_owner = null
    returning shipment_id`;
  return rows.length;
}
