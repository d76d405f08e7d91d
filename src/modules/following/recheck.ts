/**
 * Scheduled re-checks (spec-map Decisions: Re-checks; spec "What the service
 * does": followed shipments are re-checked on a schedule).
 *
 * Claim → commit → courier call → record, in the graphile-worker / pg-boss
 * shape, so no transaction is held across a courier call): a due shipment is claimed by ONE statement that stamps a
 * lease, and the claim commits before any courier is called. The outcome is
 * recorded by a second statement: a success through `recordFetch` (the new
 * record, its event and its outbox rows in one transaction, next check at
 * `RECHECK_INTERVAL_SECONDS` ± 10 %), a courier failure through
 * {@link recordFailure} (nothing about the shipment changes, no event, the
 * next check backs off exponentially).
 *
 * Any number of processes may run a runner on one database: SKIP LOCKED
 * partitions the due rows and the lease keeps a claimed row out of every
 * other claim until it expires, so a shipment is re-checked once per
 * interval. A process killed mid-batch (kill -9) leaves leases that expire;
 * the rows are then due again and another process re-checks them. Nothing
 * was written for them, so no event is lost, and change detection compares
 * against the stored record, so none is emitted twice.
 *
 * Per-backend lanes: courier calls run with at most `perCourierConcurrency`
 * in flight per backend adapter (the unit that owns a connection pool and a
 * concurrency cap in the registry), and a backend whose lane is full is left
 * out of further claims, so a slow or failing courier never holds up the
 * others.
 */
import { hostname } from "node:os";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import { CourierError, type CourierFailure } from "../couriers/adapters/types.ts";
import { COURIERS, courierBySlug } from "../couriers/catalogue.ts";
import { recordFetch, type RecordOptions } from "../tracking/store.ts";
import { backoffMs, claimDue, recordFailure, releaseClaims, unschedule, type ClaimedShipment } from "../tracking/claims.ts";
import { followingMetrics, type FollowingMetrics } from "./metrics.ts";

export { backoffMs, claimDue, recordFailure, releaseClaims, type ClaimedShipment } from "../tracking/claims.ts";

export type RecheckDeps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends" | "onEvents">;

export interface RecheckOptions {
  /** Pool to claim and record with (default `deps.db`); a second runner in tests uses its own. */
  db?: Db;
  /** Lease owner name (default `<host>:<pid>:<random>`). */
  owner?: string;
  /** Rows per claim statement (default 100). */
  claimLimit?: number;
  /** Re-check calls in flight per backend adapter (default half of COURIER_CONCURRENCY, so lookups keep the rest). */
  perCourierConcurrency?: number;
  /** Claimed rows held per process, queued or running (default 2,000). */
  maxHeld?: number;
  /** Lease length, ms (default: long enough for a full lane queue at the courier budget, see {@link defaultLeaseMs}). */
  leaseMs?: number;
  /** First back-off after a failure, ms (default min(5 min, interval)). Doubles per failure, capped at the interval. */
  backoffBaseMs?: number;
  /** Random source in [0, 1) for the schedule jitter (tests pass a constant). */
  random?: () => number;
  metrics?: FollowingMetrics;
  /** Test hook passed to `recordFetch`: runs inside the record transaction after the event sink (the outbox insert). */
  afterOutbox?: RecordOptions["afterOutbox"];
}

/** What one drain did. */
export interface RecheckStats {
  claimed: number;
  /** Re-checks stored with an event. */
  changed: number;
  /** Re-checks stored without a change worth an event. */
  unchanged: number;
  /** Courier failures recorded (backed off). */
  failed: number;
  /** Claimed but not re-checked: lease lapsed while queued, given back at stop, or the record step failed. */
  skipped: number;
  /** Rows taken out of the schedule (courier no longer scheduled). */
  unscheduled: number;
  /** Events written, by type. */
  events: Record<string, number>;
  /** Courier failures by courier slug. */
  errors: Record<string, number>;
  /** Wall time, ms. */
  ms: number;
}

export interface RecheckRunner {
  /** Lease owner name of this runner. */
  readonly owner: string;
  readonly leaseMs: number;
  /**
   * Claims and re-checks everything due now (by `deps.clock`), lane by lane,
   * until a claim comes back empty and nothing is in flight; resolves with
   * what it did. Concurrent calls share one drain.
   * @throws when a claim fails (database down): the caller backs off; rows
   *   already claimed are left to their leases.
   */
  drain(): Promise<RecheckStats>;
  /** Stops claiming, gives queued rows back, waits up to `timeout` ms (default 10,000) for running re-checks. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

/**
 * Lease covering the worst case of a full lane: every queued row waits for the
 * ones ahead of it, each using the whole courier budget, plus
 * LEASE_SLACK_SECONDS. Milliseconds.
 */
export function defaultLeaseMs(config: RecheckDeps["config"], perLane: number, queueCap: number): number {
  const budget = Math.max(config.courierTimeoutMs, config.courierAsyncBudgetMs);
  return (Math.ceil(queueCap / perLane) + 1) * budget + config.leaseSlackSeconds * 1000;
}

interface Held extends ClaimedShipment {
  leaseUntilMs: number;
}

interface Lane {
  active: number;
  queue: Held[];
}

const emptyStats = (): RecheckStats => ({ claimed: 0, changed: 0, unchanged: 0, failed: 0, skipped: 0, unscheduled: 0, events: {}, errors: {}, ms: 0 });

/** Creates a runner; nothing runs until `drain()` (the scheduler calls it from a Croner job). */
export function createRecheckRunner(deps: RecheckDeps, opts: RecheckOptions = {}): RecheckRunner {
  const db = opts.db ?? deps.db;
  const log = deps.log.child({ component: "recheck" });
  const metrics = opts.metrics ?? followingMetrics;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const claimLimit = opts.claimLimit ?? 100;
  const perLane = opts.perCourierConcurrency ?? Math.max(1, Math.floor(deps.config.courierConcurrency / 2));
  // A lane is "full" (left out of claims) once it holds two rounds of calls; one claim can overshoot by claimLimit.
  const laneCap = perLane * 2;
  const maxHeld = opts.maxHeld ?? 2_000;
  const leaseMs = opts.leaseMs ?? defaultLeaseMs(deps.config, perLane, laneCap + claimLimit);
  const intervalMs = deps.config.recheckIntervalSeconds * 1000;
  const backoffBase = opts.backoffBaseMs ?? Math.min(300_000, intervalMs);
  const random = opts.random ?? Math.random;

  // Keyed by backend adapter id ("unknown" for a slug no longer in the catalogue).
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  let held = 0;
  let stopping = false;
  let stats = emptyStats();
  let current: Promise<RecheckStats> | undefined;

  const laneOf = (adapter: string) => {
    let l = lanes.get(adapter);
    if (!l) lanes.set(adapter, (l = { active: 0, queue: [] }));
    return l;
  };

  /** Courier slugs whose backend lane is full. */
  function saturated(): string[] {
    const full = new Set<string>();
    for (const [a, l] of lanes) if (l.active + l.queue.length >= laneCap) full.add(a);
    return full.size ? COURIERS.filter((c) => full.has(c.adapter)).map((c) => c.slug) : [];
  }

  async function recheckOne(row: Held): Promise<void> {
    const courier = courierBySlug(row.courier);
    if (!courier || courier.follow !== "scheduled") {
      // Lookup-only couriers are never scheduled (spec-map Decisions: Lookup-only couriers); a stray row (catalogue change) leaves the schedule.
      await unschedule(db, row.id, owner);
      stats.unscheduled++;
      return;
    }
    // Waited in the lane past its lease: another process may hold it now; calling would re-check it twice.
    if (deps.clock.now() >= row.leaseUntilMs) {
      stats.skipped++;
      return;
    }
    let snapshot;
    try {
      snapshot = (await deps.backends.lookup(courier, row.tracking_number)).snapshot;
    } catch (err) {
      // The registry classifies every failure; anything else is an adapter bug, treated as a backend error.
      const kind: CourierFailure = err instanceof CourierError ? err.kind : "backend";
      const failures = row.recheck_failures + 1;
      const nextAt = deps.clock.now() + backoffMs(failures, backoffBase, Math.max(backoffBase, intervalMs), random);
      const mine = await recordFailure(db, row.id, owner, row.leaseUntilMs, nextAt);
      metrics.courierErrors.inc({ courier: courier.slug, kind });
      metrics.rechecks.inc({ courier: courier.slug, outcome: "failed" });
      stats.failed++;
      stats.errors[courier.slug] = (stats.errors[courier.slug] ?? 0) + 1;
      log.debug("re-check failed; backing off", { courier: courier.slug, shipment_id: row.id, kind, failures, next_in_s: Math.round((nextAt - deps.clock.now()) / 1000), lease_held: mine });
      return;
    }
    const res = await recordFetch(db, courier, row.tracking_number, snapshot, {
      nowMs: deps.clock.now(),
      recheckIntervalSeconds: deps.config.recheckIntervalSeconds,
      random,
      onEvents: deps.onEvents,
      afterOutbox: opts.afterOutbox,
    });
    metrics.rechecks.inc({ courier: courier.slug, outcome: res.event ? "changed" : "unchanged" });
    if (res.event) {
      metrics.events.inc({ type: res.event });
      stats.changed++;
      stats.events[res.event] = (stats.events[res.event] ?? 0) + 1;
    } else stats.unchanged++;
  }

  function kick(lane: Lane): void {
    while (!stopping && lane.active < perLane && lane.queue.length > 0) {
      const row = lane.queue.shift()!;
      lane.active++;
      const p: Promise<void> = recheckOne(row)
        .catch((e) => {
          // Database trouble while recording: the lease stays and the row comes due again when it expires.
          stats.skipped++;
          log.error("re-check could not be recorded; the lease will expire and it is retried", { shipment_id: row.id, courier: row.courier, error: e as Error });
        })
        .finally(() => {
          lane.active--;
          held--;
          running.delete(p);
          kick(lane);
        });
      running.add(p);
    }
  }

  // The last claim that came back empty, and which couriers it left out. A claim that leaves out every
  // courier with due rows walks the whole due range to find nothing, so it is not repeated while the
  // same lanes (or more) are still full; only a lane with room again, or a second passing (rows coming
  // due), is worth another statement.
  let lastEmpty: { excluded: Set<string>; at: number } | undefined;

  /** One claim statement; queues the rows in their lanes. Returns rows claimed. */
  async function claimOnce(): Promise<number> {
    const room = maxHeld - held;
    if (room <= 0 || stopping) return 0;
    const excluded = saturated();
    if (lastEmpty && performance.now() - lastEmpty.at < 1000 && [...lastEmpty.excluded].every((c) => excluded.includes(c))) return 0;
    const nowMs = deps.clock.now();
    const rows = await claimDue(db, nowMs, Math.min(claimLimit, room), leaseMs, owner, { excludeCouriers: excluded });
    lastEmpty = rows.length === 0 ? { excluded: new Set(excluded), at: performance.now() } : undefined;
    stats.claimed += rows.length;
    held += rows.length;
    const touched = new Set<Lane>();
    for (const r of rows) {
      const c = courierBySlug(r.courier);
      const lane = laneOf(c?.adapter ?? "unknown");
      lane.queue.push({ ...r, leaseUntilMs: nowMs + leaseMs });
      touched.add(lane);
    }
    for (const l of touched) kick(l);
    return rows.length;
  }

  async function drainLoop(): Promise<RecheckStats> {
    stats = emptyStats();
    lastEmpty = undefined;
    const started = performance.now();
    const timer = metrics.drainSeconds.startTimer();
    try {
      for (;;) {
        if (stopping) break;
        const n = await claimOnce();
        if (n > 0) continue;
        // Nothing claimable now. Done when nothing runs either; else wait for a slot (a full lane may drain) and claim again.
        if (running.size === 0) break;
        await Promise.race(running);
      }
      await Promise.allSettled([...running]);
    } finally {
      timer();
      stats.ms = Math.round(performance.now() - started);
    }
    if (stats.claimed > 0) log.info("re-check drain", { ...stats, owner });
    return stats;
  }

  return {
    owner,
    leaseMs,
    drain() {
      current ??= drainLoop().finally(() => (current = undefined));
      return current;
    },
    async stop(o = {}) {
      stopping = true;
      const queued: string[] = [];
      for (const l of lanes.values()) {
        for (const r of l.queue.splice(0)) queued.push(r.id);
      }
      held -= queued.length;
      stats.skipped += queued.length;
      if (queued.length) await releaseClaims(db, queued, owner, deps.clock.now()).catch((e) => log.warn("could not give claims back; their leases will expire", { rows: queued.length, error: e as Error }));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, o.timeout ?? 10_000)))]);
      clearTimeout(timer);
    },
  };
}

/** Convenience for tests and one-shot use: one runner, one drain. */
export function runRecheckBatch(deps: RecheckDeps, opts: RecheckOptions = {}): Promise<RecheckStats> {
  return createRecheckRunner(deps, opts).drain();
}
