/**
 * Housekeeping (spec-map Decisions: Re-checks; docs/rechecks.md): releases expired re-check leases and prunes
 * what is past retention (`RETENTION_DAYS`, default 30) so the hot tables
 * stay small: final outbox rows (delivered, abandoned, dropped, skipped),
 * attempt logs, events no outbox row refers to any more, rate-limit windows
 * and demo hits.
 *
 * Deletes run in bounded batches (`batchSize` rows per statement, at most
 * `maxBatches` statements per table per run): each statement holds its row
 * locks briefly, and a large backlog is worked off over several runs instead
 * of in one long transaction. Safe to run from every replica at once: two
 * deletes of the same row just find it gone.
 */
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import { IDEMPOTENCY_TTL_MS, prune as pruneIdempotencyKeys } from "../../http/idempotency.ts";

export type HousekeepingDeps = Pick<AppDeps, "db" | "clock" | "config" | "log">;

export interface HousekeepingOptions {
  /** Rows per delete statement (default 5,000). */
  batchSize?: number;
  /** Statements per table per run (default 100). */
  maxBatches?: number;
}

/** Rows affected per step of one run. */
export interface HousekeepingResult {
  leasesReleased: number;
  deliveries: number;
  attempts: number;
  events: number;
  rateWindows: number;
  demoHits: number;
  /** Dashboard sessions past their expiry. */
  sessions: number;
  /** Stored idempotent responses past their 24 h. */
  idempotencyKeys: number;
  ms: number;
}

/**
 * Clears leases that ran out (a process died mid re-check). The row is
 * already due again (a claim leaves next_check_at as it was and an expired
 * lease no longer hides the row from claims), so this only tidies
 * `lease_owner`/`lease_until` and counts the dead claims.
 * The predicate on next_check_at keeps the scan on `shipments_due_idx`.
 */
export async function releaseExpiredLeases(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const rows = await db.$client`
    update shipments set lease_until = null, lease_owner = null
    where next_check_at <= ${now} and lease_until <= ${now}
    returning id
  `;
  return rows.length;
}

async function batched(maxBatches: number, batchSize: number, stmt: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await stmt();
    total += n;
    if (n < batchSize) break;
  }
  return total;
}

/**
 * One housekeeping run at `deps.clock.now()`; everything strictly older than
 * now − RETENTION_DAYS goes, nothing newer.
 * @throws whatever the database throws (the scheduler logs and tries again next run).
 */
export async function runHousekeeping(deps: HousekeepingDeps, opts: HousekeepingOptions = {}): Promise<HousekeepingResult> {
  const started = performance.now();
  const sql = deps.db.$client;
  const batch = opts.batchSize ?? 5_000;
  const max = opts.maxBatches ?? 100;
  const nowMs = deps.clock.now();
  const cutoff = new Date(nowMs - deps.config.retentionDays * 86_400_000).toISOString();

  const leasesReleased = await releaseExpiredLeases(deps.db, nowMs);

  // Final outbox rows, by their last change; their attempt rows go with them (ON DELETE CASCADE).
  // Pending rows are never touched here, however old: the worker still owes them an attempt.
  // `created_at < cutoff` follows from `updated_at < cutoff` (a row is changed only after it is
  // created) and lets deliveries_created_idx bound the scan: no index covers updated_at or state, so
  // the worker's claim and outcome updates stay HOT. Rows created before the cutoff but changed after
  // it (retries still running then) are the only ones the scan passes over.
  const deliveries = await batched(max, batch, async () =>
    (await sql`
      delete from deliveries where id in (
        select id from deliveries
        where created_at < ${cutoff} and updated_at < ${cutoff}
          and state in ('delivered', 'abandoned', 'dropped', 'skipped')
        limit ${batch})
      returning 1`).length,
  );

  // Attempt logs past retention even where the delivery itself is younger (a long retry history).
  const attempts = await batched(max, batch, async () =>
    (await sql`
      delete from delivery_attempts where id in (
        select id from delivery_attempts where started_at < ${cutoff} limit ${batch})
      returning 1`).length,
  );

  // An event goes only once no outbox row refers to it: deleting it would cascade to its deliveries,
  // and a delivery (pending or still within retention) must outlive the event row it points at.
  // events_created_idx bounds the candidates; the anti-join hashes deliveries.event_id once.
  const events = await batched(max, batch, async () =>
    (await sql`
      delete from events where id in (
        select e.id from events e
        where e.created_at < ${cutoff}
          and not exists (select 1 from deliveries d where d.event_id = e.id)
        limit ${batch})
      returning 1`).length,
  );

  // Fixed-window counters and demo hits: only the newest hour is ever read; these go at retention too.
  const rateWindows = await batched(max, batch, async () =>
    (await sql`
      delete from rate_windows where ctid in (
        select ctid from rate_windows where window_start < ${cutoff} limit ${batch})
      returning 1`).length,
  );
  const demoHits = await batched(max, batch, async () =>
    (await sql`
      delete from demo_hits where id in (
        select id from demo_hits where at < ${cutoff} limit ${batch})
      returning 1`).length,
  );

  // Expired dashboard sessions are useless at once (the dashboard refuses them); no retention applies.
  const now = new Date(nowMs).toISOString();
  const sessions = await batched(max, batch, async () =>
    (await sql`
      delete from sessions where id in (
        select id from sessions where expires_at < ${now} limit ${batch})
      returning 1`).length,
  );

  // Idempotency keys answer retries for 24 h (docs/idempotency.md), whatever RETENTION_DAYS says.
  const idempotencyKeys = await pruneIdempotencyKeys(deps.db, nowMs - IDEMPOTENCY_TTL_MS, batch);

  const result = { leasesReleased, deliveries, attempts, events, rateWindows, demoHits, sessions, idempotencyKeys, ms: Math.round(performance.now() - started) };
  const touched = leasesReleased + deliveries + attempts + events + rateWindows + demoHits + sessions + idempotencyKeys;
  if (leasesReleased > 0) deps.log.warn("expired re-check leases released (a process died mid re-check)", { component: "housekeeping", leases: leasesReleased });
  deps.log[touched > 0 ? "info" : "debug"]("housekeeping run", { component: "housekeeping", retention_days: deps.config.retentionDays, ...result });
  return result;
}
