/**
 * Scheduled re-checks (spec "What the service does"; spec-map Decisions: Re-checks): claim → commit → courier call →
 * record, on the job runner (src/jobs/runner.ts) keyed by backend adapter; one re-check in recheck-one.ts
 * (docs/rechecks.md, "The runner").
 */
import { hostname } from "node:os";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import type { RecordOptions } from "./store.ts";
import { claimDueShipments, releaseClaims, scheduleQueues } from "./claims.ts";
import { createLeaseKeeper, type LeaseKeeper } from "../../jobs/leases.ts";
import { createRunner } from "../../jobs/runner.ts";
import { COURIERS, courierBySlug } from "../couriers/catalogue.ts";
import { followingMetrics, type FollowingMetrics } from "./metrics.ts";
import { emptyStats, recheckShipment, type Held, type RecheckContext, type RecheckStats } from "./recheck-one.ts";
import { ChunkWalk } from "./chunk-walk.ts";
import { RECHECK_BACKOFF_BASE_MS } from "../../domain/following.ts";

export { claimDueShipments, releaseClaims } from "./claims.ts";
export type { RecheckStats } from "./recheck-one.ts";

/** With `services`, re-checks on `deps.db` use its prepared fast-path read (`Services.fetchRead`). */
export type RecheckDeps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends" | "onEvents"> &
  Partial<Pick<AppDeps, "services">>;

export interface RecheckOptions {
  db?: Db;
  owner?: string;
  /** Rows per claim statement (default 100). */
  claimLimit?: number;
  /** Re-check calls in flight per backend adapter (default half of COURIER_CONCURRENCY, so lookups keep the rest). */
  perCourierConcurrency?: number;
  /** Rows held (running and waiting) at most (default 2,000). */
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

/**
 * The pipeline's claim: due shipments of the backends not full, each held once (a row whose lease lapsed while
 * held and which a claim took again keeps its place). An empty claim is not repeated within 1 s while the same
 * backends are full: every finishing re-check of another backend would otherwise claim again for nothing.
 */
function recheckClaim(ctx: RecheckContext, walk: ChunkWalk, leaseMs: number, held: Map<string, Held>) {
  let lastEmpty: { full: readonly string[]; at: number } | undefined;
  return {
    reset: () => (lastEmpty = undefined),
    async claim(limit: number, nowMs: number, full: readonly string[]): Promise<Held[]> {
      if (lastEmpty && performance.now() - lastEmpty.at < 1000 && lastEmpty.full.every((k) => full.includes(k)))
        return [];
      const excludeCouriers = COURIERS.filter((c) => full.includes(c.adapter)).map((c) => c.slug);
      const rows = await claimDueShipments(ctx.db, nowMs, limit, leaseMs, ctx.owner, { excludeCouriers, walk });
      lastEmpty = rows.length === 0 ? { full, at: performance.now() } : undefined;
      ctx.stats.claimed += rows.length;
      const fresh: Held[] = [];
      for (const r of rows) {
        const mine = held.get(r.id);
        if (mine) mine.leaseUntilMs = Math.max(mine.leaseUntilMs, nowMs + leaseMs);
        else fresh.push({ ...r, leaseUntilMs: nowMs + leaseMs });
      }
      for (const h of fresh) held.set(h.id, h);
      return fresh;
    },
  };
}

/** One claimed row: its re-check, then its chunk's cursor; never rejects (a failed write leaves a lease to run out). */
async function recheckTask(ctx: RecheckContext, walk: ChunkWalk, row: Held): Promise<void> {
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
}

/** The heartbeat of the rows held: rows claimed on their own keep their own leases, chunk members their chunk's. */
function recheckLeases(ctx: RecheckContext, walk: ChunkWalk, leaseMs: number, held: () => Held[]): LeaseKeeper {
  const renew: typeof scheduleQueues.renew = async (sql, ids, token, untilMs) => [
    ...(await scheduleQueues.renew(sql, ids, token, untilMs)),
    ...(await walk.renew(ids as readonly string[], untilMs)),
  ];
  const { db, deps, owner, log } = ctx;
  return createLeaseKeeper({
    queue: { ...scheduleQueues, renew },
    sql: db.$client,
    clock: deps.clock,
    owner,
    leaseMs,
    held,
    log,
  });
}

/** One drain with the stats of its re-checks, timed (the drain histogram) and logged when it claimed anything. */
async function drainWithStats(ctx: RecheckContext, drain: () => Promise<number>): Promise<RecheckStats> {
  const stats = emptyStats();
  ctx.stats = stats;
  const started = performance.now();
  const timer = ctx.metrics.drainSeconds.startTimer();
  try {
    await drain();
  } finally {
    timer();
    stats.ms = Math.round(performance.now() - started);
  }
  if (stats.claimed > 0) ctx.log.info("re-check drain", { ...stats, owner: ctx.owner });
  return stats;
}

/** Creates a runner (the job runner over the re-check claim); nothing runs until `drain()` (the scheduler calls it from a Croner job). */
export function createRecheckRunner(deps: RecheckDeps, opts: RecheckOptions = {}): RecheckRunner {
  const db = opts.db ?? deps.db;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const leaseMs = opts.leaseMs ?? defaultLeaseMs(deps.config);
  const ctx = recheckContext(deps, opts, db, owner);
  const walk = new ChunkWalk(db, owner, {
    intervalMs: ctx.intervalMs,
    random: ctx.random,
    now: () => deps.clock.now(),
  });
  const held = new Map<string, Held>();
  const claims = recheckClaim(ctx, walk, leaseMs, held);
  const perKey = opts.perCourierConcurrency ?? Math.max(1, Math.floor(deps.config.courierConcurrency / 2));
  let stopping = false;
  let keeper: LeaseKeeper | undefined;
  const warn = (what: string, rows?: number) => (e: unknown) =>
    ctx.log.warn(`could not give ${what} back; their leases will expire`, { rows, error: e as Error });
  const runner = createRunner<Held>({
    name: "re-check",
    clock: deps.clock,
    log: ctx.log,
    // No limit but the backends' and the rows held: `maxHeld` bounds running and waiting rows together.
    concurrency: opts.maxHeld ?? 2_000,
    prefetch: 0,
    refillAt: 1,
    // A row waits however long its backend is busy; its lease is renewed meanwhile.
    maxWaitMs: Number.POSITIVE_INFINITY,
    drainBatch: opts.claimLimit ?? 100,
    keyOf: (row) => courierBySlug(row.courier)?.adapter ?? "unknown",
    perKey,
    // A backend holding two rounds of calls is left out of claims; one claim can overshoot by `claimLimit`.
    keyFullAt: perKey * 2,
    claim: claims.claim,
    task: (row) => recheckTask(ctx, walk, row).finally(() => held.delete(row.id)),
    async release(rows) {
      for (const r of rows) held.delete(r.id);
      ctx.stats.skipped += rows.length;
      const ids = rows.map((r) => r.id);
      if (ids.length) await releaseClaims(db, ids, owner, deps.clock.now()).catch(warn("claims", ids.length));
      if (stopping) await walk.release().catch(warn("re-check chunks"));
    },
    keepLeases: (rows) => (keeper = recheckLeases(ctx, walk, leaseMs, rows)),
  });
  let current: Promise<RecheckStats> | undefined;
  const drainOnce = () => {
    claims.reset();
    return drainWithStats(ctx, () => runner.drain());
  };
  return {
    owner,
    leaseMs,
    drain: () => (current ??= drainOnce().finally(() => (current = undefined))),
    renew: () => keeper?.renew() ?? Promise.resolve(),
    async stop(o = {}) {
      stopping = true;
      await runner.stop(o);
    },
  };
}

/** One runner, one drain: the production runner, run once. @internal test seam */
export function runRecheckBatch(deps: RecheckDeps, opts: RecheckOptions = {}): Promise<RecheckStats> {
  return createRecheckRunner(deps, opts).drain();
}
