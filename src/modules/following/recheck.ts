/**
 * Scheduled re-checks (spec "What the service does"; spec-map Decisions: Re-checks): claim → commit → courier call →
 * record, in per-backend lanes (recheck-lanes.ts), one re-check in recheck-one.ts (docs/rechecks.md, "The runner").
 */
import { hostname } from "node:os";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import type { RecordOptions } from "./store.ts";
import { releaseClaims, scheduleQueues } from "./claims.ts";
import { createLeaseKeeper } from "../../db/queue.ts";
import { followingMetrics, type FollowingMetrics } from "./metrics.ts";
import { emptyStats, recheckShipment, type RecheckContext, type RecheckStats } from "./recheck-one.ts";
import { createClaimer, createCourierLanes } from "./recheck-lanes.ts";
import { ChunkWalk } from "./chunk-walk.ts";
import { settleWithin } from "../../lib/settle.ts";
import { RECHECK_BACKOFF_BASE_MS } from "../../domain/following.ts";

export { claimDueShipments, releaseClaims } from "./claims.ts";
export type { RecheckStats } from "./recheck-one.ts";

/** With `services`, re-checks on `deps.db` use its prepared fast-path read (`Services.fetchRead`). */
export type RecheckDeps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends" | "onEvents"> &
  Partial<Pick<AppDeps, "services">>;

export interface RecheckOptions {
  db?: Db;
  owner?: string;
  claimLimit?: number;
  /** Re-check calls in flight per backend adapter (default half of COURIER_CONCURRENCY, so lookups keep the rest). */
  perCourierConcurrency?: number;
  maxHeld?: number;
  /** Lease length, ms, renewed every third of it while the row is held (default LEASE_SLACK_SECONDS, see {@link defaultLeaseMs}). */
  leaseMs?: number;
  /** First back-off after a retryable failure, ms (default min(5 min, interval)). Doubles per failure, capped at the interval; a non-retryable one waits the cap at once (`recheckAfterFailureMs`, src/domain/following.ts). */
  backoffBaseMs?: number;
  random?: () => number;
  metrics?: FollowingMetrics;
  /** Test hook passed to `recordFetch`: runs inside the record transaction after the event sink (the outbox insert). */
  afterOutbox?: RecordOptions["afterOutbox"];
}

export interface RecheckRunner {
  readonly owner: string;
  readonly leaseMs: number;
  /** Re-checks everything due now until a claim comes back empty; concurrent calls share one drain. @throws when a claim fails. */
  drain(): Promise<RecheckStats>;
  /** Renews the leases of every row held to now + leaseMs in one statement. @throws whatever the database throws. */
  renew(): Promise<void>;
  /** Stops claiming, gives queued rows back, waits up to `timeout` ms (default 10,000) for running re-checks. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

/** Shortest lease a claim stamps, ms: two thirds of it is the margin for a late renewal. */
export const MIN_RECHECK_LEASE_MS = 5_000;

/** The lease a claim stamps, ms: LEASE_SLACK_SECONDS, at least {@link MIN_RECHECK_LEASE_MS} (docs/rechecks.md, "Short leases, renewed"). */
export function defaultLeaseMs(config: RecheckDeps["config"]): number {
  return Math.max(MIN_RECHECK_LEASE_MS, config.leaseSlackSeconds * 1000);
}

function recheckContext(deps: RecheckDeps, opts: RecheckOptions, db: Db, owner: string): RecheckContext {
  const intervalMs = deps.config.recheckIntervalSeconds * 1000;
  return {
    deps,
    db,
    log: deps.log.child({ component: "recheck" }),
    owner,
    metrics: opts.metrics ?? followingMetrics,
    random: opts.random ?? Math.random,
    backoffBaseMs: opts.backoffBaseMs ?? Math.min(RECHECK_BACKOFF_BASE_MS, intervalMs),
    intervalMs,
    afterOutbox: opts.afterOutbox,
    stats: emptyStats(),
    fetchRead: db === deps.db ? deps.services?.fetchRead : undefined,
  };
}

type Lanes = ReturnType<typeof createCourierLanes>;

async function drainLoop(
  ctx: RecheckContext,
  lanes: Lanes,
  claimer: ReturnType<typeof createClaimer>,
  keeper: ReturnType<typeof createLeaseKeeper>,
  stopping: () => boolean,
): Promise<RecheckStats> {
  ctx.stats = emptyStats();
  const stats = ctx.stats;
  claimer.reset();
  const started = performance.now();
  const timer = ctx.metrics.drainSeconds.startTimer();
  keeper.start();
  try {
    while (!stopping()) {
      const n = await claimer.claim();
      stats.claimed += n;
      if (n > 0) continue;
      // Nothing claimable: done when nothing runs, else wait for a slot (a full lane may drain) and claim again.
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
  if (stats.claimed > 0) ctx.log.info("re-check drain", { ...stats, owner: ctx.owner });
  return stats;
}

function recheckLanes(ctx: RecheckContext, perLane: number, walk: ChunkWalk): Lanes {
  return createCourierLanes({
    perLane,
    // "Full" (left out of claims) at two rounds of calls; one claim can overshoot by claimLimit.
    laneCap: perLane * 2,
    run: async (row) => {
      const ok = await recheckShipment(ctx, row).catch((e) => {
        ctx.stats.skipped++;
        ctx.log.error("re-check could not be recorded; the lease will expire and it is retried", {
          shipment_id: row.id,
          courier: row.courier,
          error: e as Error,
        });
        return false;
      });
      await walk.finish(row, ok).catch((e) =>
        ctx.log.warn("re-check chunk not advanced; its lease will expire and the run resumes", {
          chunk: row.chunk,
          error: e as Error,
        }),
      );
    },
  });
}

/** Creates a runner from its parts (lanes, claimer, one re-check); nothing runs until `drain()` (the scheduler calls it from a Croner job). */
export function createRecheckRunner(deps: RecheckDeps, opts: RecheckOptions = {}): RecheckRunner {
  const db = opts.db ?? deps.db;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const leaseMs = opts.leaseMs ?? defaultLeaseMs(deps.config);
  const ctx = recheckContext(deps, opts, db, owner);
  const log = ctx.log;
  const walk = new ChunkWalk(db, owner, {
    intervalMs: ctx.intervalMs,
    random: ctx.random,
    now: () => deps.clock.now(),
  });
  const lanes = recheckLanes(
    ctx,
    opts.perCourierConcurrency ?? Math.max(1, Math.floor(deps.config.courierConcurrency / 2)),
    walk,
  );
  const claimer = createClaimer({
    db,
    clock: deps.clock,
    owner,
    leaseMs,
    claimLimit: opts.claimLimit ?? 100,
    maxHeld: opts.maxHeld ?? 2_000,
    lanes,
    walk,
  });
  let stopping = false;
  let current: Promise<RecheckStats> | undefined;
  const keeper = createLeaseKeeper({
    // Rows claimed on their own keep their own leases; chunk members their chunk's.
    queue: {
      ...scheduleQueues,
      renew: async (sql, ids, token, untilMs) => [
        ...(await scheduleQueues.renew(sql, ids, token, untilMs)),
        ...(await walk.renew(ids as readonly string[], untilMs)),
      ],
    },
    sql: db.$client,
    clock: deps.clock,
    owner,
    leaseMs,
    held: lanes.heldRows,
    log,
  });

  return {
    owner,
    leaseMs,
    drain() {
      current ??= drainLoop(ctx, lanes, claimer, keeper, () => stopping).finally(() => {
        current = undefined;
      });
      return current;
    },
    renew: keeper.renew,
    async stop(o = {}) {
      stopping = true;
      const queued = lanes.stop().map((r) => r.id);
      ctx.stats.skipped += queued.length;
      if (queued.length)
        await releaseClaims(db, queued, owner, deps.clock.now()).catch((e) =>
          log.warn("could not give claims back; their leases will expire", { rows: queued.length, error: e as Error }),
        );
      await walk
        .release()
        .catch((e) => log.warn("could not give re-check chunks back; their leases will expire", { error: e as Error }));
      await settleWithin(lanes.running(), o.timeout ?? 10_000);
    },
  };
}

/** One runner, one drain: the production runner, run once. @internal test seam */
export function runRecheckBatch(deps: RecheckDeps, opts: RecheckOptions = {}): Promise<RecheckStats> {
  return createRecheckRunner(deps, opts).drain();
}
