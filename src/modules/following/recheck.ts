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
 * interval. Leases are short (LEASE_SLACK_SECONDS) and renewed by a
 * heartbeat while the runner holds the rows (docs/rechecks.md, "Short
 * leases, renewed"): a process killed mid-batch (kill -9) stops renewing, and
 * within one lease slack its rows are due again and another process re-checks
 * them. Nothing was written for them, so no event is lost, and change
 * detection compares against the stored record, so none is emitted twice.
 *
 * Per-backend lanes: courier calls run with at most `perCourierConcurrency`
 * in flight per backend adapter (the unit that owns a connection pool and a
 * concurrency cap in the registry), and a backend whose lane is full is left
 * out of further claims, so a slow or failing courier never holds up the
 * others.
 *
 * Parts: the courier lanes and the claimer filling them (recheck-lanes.ts),
 * one re-check and its outcome (recheck-one.ts); this file wires them into a
 * runner and drains.
 */
import { hostname } from "node:os";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import type { RecordOptions } from "./store.ts";
import { recheckQueue, releaseClaims } from "./claims.ts";
import { createLeaseKeeper } from "../../db/queue.ts";
import { followingMetrics, type FollowingMetrics } from "./metrics.ts";
import { emptyStats, recheckShipment, type RecheckContext, type RecheckStats } from "./recheck-one.ts";
import { createClaimer, createCourierLanes } from "./recheck-lanes.ts";
import { settleWithin } from "../../lib/settle.ts";
import { RECHECK_BACKOFF_BASE_MS } from "../../domain/following.ts";

export { claimDueShipments, recordFailure, releaseClaims, renewClaims, type ClaimedShipment } from "./claims.ts";
export type { RecheckStats } from "./recheck-one.ts";

/** With `services`, re-checks on `deps.db` use its prepared fast-path read (`Services.fetchRead`). */
export type RecheckDeps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends" | "onEvents"> & Partial<Pick<AppDeps, "services">>;

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
  /** Lease length, ms, renewed every third of it while the row is held (default LEASE_SLACK_SECONDS, see {@link defaultLeaseMs}). */
  leaseMs?: number;
  /** First back-off after a retryable failure, ms (default min(5 min, interval)). Doubles per failure, capped at the interval; a non-retryable one waits the cap at once (`recheckAfterFailureMs`, src/domain/following.ts). */
  backoffBaseMs?: number;
  /** Random source in [0, 1) for the schedule jitter (tests pass a constant). */
  random?: () => number;
  metrics?: FollowingMetrics;
  /** Test hook passed to `recordFetch`: runs inside the record transaction after the event sink (the outbox insert). */
  afterOutbox?: RecordOptions["afterOutbox"];
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
  /**
   * Renews the leases of every row held (queued or running) to now + leaseMs, ONE statement; a row no longer
   * ours is left to its new owner. The runner calls it every leaseMs / 3 while it holds rows.
   * @throws whatever the database throws (the leases then run out unless a later renewal succeeds).
   */
  renew(): Promise<void>;
  /** Stops claiming, gives queued rows back, waits up to `timeout` ms (default 10,000) for running re-checks. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

/**
 * Shortest lease a claim stamps, ms: renewed every third of it, a lease keeps a margin of two thirds against a
 * late renewal (a busy event loop, a slow statement); below a few seconds a live runner could lose its rows.
 */
export const MIN_RECHECK_LEASE_MS = 5_000;

/**
 * The lease a claim stamps, ms: LEASE_SLACK_SECONDS, at least {@link MIN_RECHECK_LEASE_MS}. A live runner renews
 * it every third of it for as long as it holds the row (a queue behind a slow courier, a long asynchronous
 * lookup), so it need not cover the worst case of a full lane; a dead one stops renewing, and its rows are
 * claimable again within one lease of its last renewal.
 */
export function defaultLeaseMs(config: RecheckDeps["config"]): number {
  return Math.max(MIN_RECHECK_LEASE_MS, config.leaseSlackSeconds * 1000);
}

/** Creates a runner from its parts (lanes, claimer, one re-check); nothing runs until `drain()` (the scheduler calls it from a Croner job). */
export function createRecheckRunner(deps: RecheckDeps, opts: RecheckOptions = {}): RecheckRunner {
  const db = opts.db ?? deps.db;
  const log = deps.log.child({ component: "recheck" });
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const claimLimit = opts.claimLimit ?? 100;
  const perLane = opts.perCourierConcurrency ?? Math.max(1, Math.floor(deps.config.courierConcurrency / 2));
  // A lane is "full" (left out of claims) once it holds two rounds of calls; one claim can overshoot by claimLimit.
  const laneCap = perLane * 2;
  const leaseMs = opts.leaseMs ?? defaultLeaseMs(deps.config);
  const intervalMs = deps.config.recheckIntervalSeconds * 1000;
  const metrics = opts.metrics ?? followingMetrics;
  const ctx: RecheckContext = { deps, db, log, owner, metrics, random: opts.random ?? Math.random, backoffBaseMs: opts.backoffBaseMs ?? Math.min(RECHECK_BACKOFF_BASE_MS, intervalMs), intervalMs, afterOutbox: opts.afterOutbox, stats: emptyStats(), fetchRead: db === deps.db ? deps.services?.fetchRead : undefined };
  const lanes = createCourierLanes({
    perLane,
    laneCap,
    run: (row) =>
      recheckShipment(ctx, row).catch((e) => {
        // Database trouble while recording: the lease stays and the row comes due again when it expires.
        ctx.stats.skipped++;
        log.error("re-check could not be recorded; the lease will expire and it is retried", { shipment_id: row.id, courier: row.courier, error: e as Error });
      }),
  });
  const claimer = createClaimer({ db, clock: deps.clock, owner, leaseMs, claimLimit, maxHeld: opts.maxHeld ?? 2_000, lanes });
  let stopping = false;
  let current: Promise<RecheckStats> | undefined;
  const keeper = createLeaseKeeper({ queue: recheckQueue, sql: db.$client, clock: deps.clock, owner, leaseMs, held: lanes.heldRows, log });

  async function drainLoop(): Promise<RecheckStats> {
    const stats = (ctx.stats = emptyStats());
    claimer.reset();
    const started = performance.now();
    const timer = metrics.drainSeconds.startTimer();
    keeper.start();
    try {
      while (!stopping) {
        const n = await claimer.claim();
        stats.claimed += n;
        if (n > 0) continue;
        // Nothing claimable now. Done when nothing runs either; else wait for a slot (a full lane may drain) and claim again.
        const running = lanes.running();
        if (running.length === 0) break;
        await Promise.race(running);
      }
      await Promise.allSettled(lanes.running());
    } finally {
      keeper.stop();
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
    renew: keeper.renew,
    async stop(o = {}) {
      stopping = true;
      const queued = lanes.stop().map((r) => r.id);
      ctx.stats.skipped += queued.length;
      if (queued.length) await releaseClaims(db, queued, owner, deps.clock.now()).catch((e) => log.warn("could not give claims back; their leases will expire", { rows: queued.length, error: e as Error }));
      await settleWithin(lanes.running(), o.timeout ?? 10_000);
    },
  };
}

/** Convenience for tests and one-shot use: one runner, one drain. */
export function runRecheckBatch(deps: RecheckDeps, opts: RecheckOptions = {}): Promise<RecheckStats> {
  return createRecheckRunner(deps, opts).drain();
}
