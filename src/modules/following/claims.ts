/**
 * The re-check claim and its outcome statements (graphile-worker / pg-boss
 * shape, STYLE): claim due shipments with a lease in ONE statement, record a
 * failure or give claims back with a second statement that only applies while
 * the lease is still ours. The runner in recheck.ts drives them.
 */
import type { Db } from "../../db/client.ts";

/** One claimed shipment, as returned by the claim statement. */
export interface ClaimedShipment {
  id: string;
  courier: string;
  tracking_number: string;
  /** Consecutive failed re-checks before this claim. */
  recheck_failures: number;
}

/**
 * Claims up to `limit` shipments due at `nowMs` for `leaseMs`, in one statement.
 * Units: `nowMs` ms since the epoch; `leaseMs` ms. `owner` names the claiming
 * process (kept in `lease_owner`, checked again when a failure is recorded).
 * `excludeCouriers`: courier slugs not to claim now (their lane is full).
 * @throws whatever the database throws (nothing is claimed then).
 */
export async function claimDue(db: Db, nowMs: number, limit: number, leaseMs: number, owner: string, opts: { excludeCouriers?: readonly string[] } = {}): Promise<ClaimedShipment[]> {
  const sql = db.$client;
  // Timestamps travel as ISO text: drizzle turns postgres-js's Date serialisers off on this client.
  const now = new Date(nowMs).toISOString();
  const lease = new Date(nowMs + leaseMs).toISOString();
  const exclude = opts.excludeCouriers?.length ? sql`and courier not in ${sql(opts.excludeCouriers as string[])}` : sql``;
  // Why this shape:
  // - The inner select walks the partial index shipments_due_idx (next_check_at is not null) in due
  //   order and stops after `limit` rows, so a claim costs the same at 10k or 1M shipments.
  // - FOR UPDATE SKIP LOCKED: concurrent claimers (any number of processes) take disjoint rows instead
  //   of queueing on each other; a row locked by recordFetch (a /v1/track lookup) is skipped this round.
  // - The outer update stamps the lease AND moves next_check_at to the lease expiry in the same
  //   statement, so the row leaves the due range the moment this autocommit ends: no other claim can
  //   take it while we hold it, and the due index scan never wades through claimed rows. If we die,
  //   next_check_at = lease_until comes due by itself: that predicate is the stale-lease reset.
  // - `lease_until <= now` is kept as a guard for rows a lookup rescheduled while leased.
  const rows = await sql`
    update shipments s
    set lease_until = ${lease}, lease_owner = ${owner}, next_check_at = ${lease}
    from (
      select id from shipments
      where next_check_at <= ${now}
        and (lease_until is null or lease_until <= ${now})
        ${exclude}
      order by next_check_at
      limit ${limit}
      for update skip locked
    ) due
    where s.id = due.id
    returning s.id, s.courier, s.tracking_number, s.recheck_failures
  `;
  return rows as unknown as ClaimedShipment[];
}

/**
 * Back-off after `failures` consecutive failed re-checks (1 = the first):
 * `baseMs · 2^(failures−1)`, capped at `capMs`, ± 10 % jitter. Milliseconds.
 */
export function backoffMs(failures: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const raw = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(raw * (0.9 + random() * 0.2));
}

/**
 * Records a failed re-check (a courier timeout, 5xx, throttling, missing
 * credentials, "no record"): the shipment record stays as it was and no
 * event is written (issue 4 item 3: a transient failure changes nothing and
 * emits nothing); `recheck_failures` goes up by one and the next check is
 * `nextAt`. Only while our lease holds: a lookup that recorded meanwhile
 * already cleared the lease and rescheduled, and its result wins.
 * Returns false when the lease was no longer ours (nothing written).
 */
export async function recordFailure(db: Db, id: string, owner: string, leaseUntilMs: number, nextAtMs: number): Promise<boolean> {
  const rows = await db.$client`
    update shipments
    set recheck_failures = recheck_failures + 1, next_check_at = ${new Date(nextAtMs).toISOString()},
        lease_until = null, lease_owner = null
    where id = ${id} and lease_owner = ${owner} and lease_until = ${new Date(leaseUntilMs).toISOString()}
    returning id
  `;
  return rows.length > 0;
}

/**
 * Gives claimed rows back unprocessed (a stopping process): due again at
 * `nowMs` so another replica picks them up at once instead of after the
 * lease. Only rows whose lease `owner` still holds.
 */
export async function releaseClaims(db: Db, ids: readonly string[], owner: string, nowMs: number): Promise<number> {
  if (ids.length === 0) return 0;
  const sql = db.$client;
  const rows = await sql`
    update shipments set next_check_at = ${new Date(nowMs).toISOString()}, lease_until = null, lease_owner = null
    where id in ${sql(ids as string[])} and lease_owner = ${owner}
    returning id
  `;
  return rows.length;
}

/** Takes a row out of the schedule (its courier left the catalogue or became lookup-only). */
export async function unschedule(db: Db, id: string, owner: string): Promise<void> {
  await db.$client`update shipments set next_check_at = null, lease_until = null, lease_owner = null where id = ${id} and lease_owner = ${owner}`;
}
