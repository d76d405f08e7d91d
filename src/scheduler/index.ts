/**
 * In-process jobs, each with an owner that can stop it: explicit `start()` / `stop({ timeout })`,
 * started by `main.ts` only for ROLE=all|worker, never by `buildApp()`.
 *
 * - re-check: every RECHECK_POLL_SECONDS (default 5), drain the due
 *   shipments (modules/following/recheck.ts). The claim is shared through
 *   Postgres, so every replica runs this job and none re-checks a shipment twice.
 * - housekeeping: every 10 minutes, release expired leases and prune what is
 *   past RETENTION_DAYS (modules/following/housekeeping.ts).
 *
 * Croner's overrun protection (`protect: true`) skips a tick while the
 * previous run of the same job is still going. A failing run (PostgreSQL
 * restarting) is logged and the job pauses, 1 s doubling to 60 s, then
 * resumes by itself. The delivery worker is the webhooks module's own
 * (`createDeliveryWorker`), started next to this by `main.ts`.
 */
import { Cron } from "croner";
import type { AppDeps } from "../deps.ts";
import { runHousekeeping, type HousekeepingOptions } from "../modules/following/housekeeping.ts";
import { createRecheckRunner, type RecheckOptions, type RecheckRunner, type RecheckStats } from "../modules/following/recheck.ts";

export interface Scheduler {
  start(): Promise<void>;
  /** Stops the jobs and waits for running ones, at most `timeout` ms (default 10,000). */
  stop(opts?: { timeout?: number }): Promise<void>;
}

export interface SchedulerOptions {
  /** Croner pattern of the re-check job (default every RECHECK_POLL_SECONDS). */
  recheckPattern?: string;
  /** Croner pattern of the housekeeping job (default every 10 minutes). */
  housekeepingPattern?: string;
  recheck?: RecheckOptions;
  housekeeping?: HousekeepingOptions;
  /** Called after each re-check drain (tests observe the job through it). */
  onDrain?: (stats: RecheckStats) => void;
}

/** A job body that backs off after a failure instead of hammering a database that is down. */
function guarded(name: string, deps: AppDeps, body: () => Promise<void>): () => Promise<void> {
  const log = deps.log.child({ component: "scheduler", job: name });
  let backoffMs = 0;
  let pausedUntil = 0;
  return async () => {
    if (Date.now() < pausedUntil) return;
    try {
      await body();
      if (backoffMs) log.info("job resumed");
      backoffMs = 0;
    } catch (e) {
      backoffMs = Math.min(60_000, Math.max(1_000, backoffMs * 2));
      pausedUntil = Date.now() + backoffMs;
      log.warn("job failed; backing off", { ms: backoffMs, error: e as Error });
    }
  };
}

/** Builds the jobs; nothing runs until `start()`. */
export function createScheduler(deps: AppDeps, opts: SchedulerOptions = {}): Scheduler {
  let jobs: Cron[] = [];
  let runner: RecheckRunner | undefined;
  let housekeeping: Promise<unknown> | undefined;

  return {
    async start() {
      if (jobs.length) return;
      const r = (runner = createRecheckRunner(deps, opts.recheck));
      const recheck = guarded("recheck", deps, async () => {
        const stats = await r.drain();
        opts.onDrain?.(stats);
      });
      const hk = guarded("housekeeping", deps, async () => {
        const p = runHousekeeping(deps, opts.housekeeping);
        housekeeping = p;
        await p.finally(() => (housekeeping = undefined));
      });
      jobs = [
        opts.recheckPattern
          ? new Cron(opts.recheckPattern, { protect: true }, recheck)
          : new Cron("* * * * * *", { protect: true, interval: deps.config.recheckPollSeconds }, recheck),
        new Cron(opts.housekeepingPattern ?? "0 */10 * * * *", { protect: true }, hk),
      ];
      deps.log.info("scheduler started", { component: "scheduler", owner: r.owner, lease_ms: r.leaseMs, recheck_interval_s: deps.config.recheckIntervalSeconds, retention_days: deps.config.retentionDays });
    },
    async stop(o = {}) {
      const timeout = o.timeout ?? 10_000;
      const deadline = Date.now() + timeout;
      for (const j of jobs) j.stop();
      jobs = [];
      // In order: re-checks first (queued claims go back, running ones are recorded), then housekeeping.
      await runner?.stop({ timeout });
      runner = undefined;
      const left = deadline - Date.now();
      if (housekeeping && left > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([housekeeping.catch(() => {}), new Promise((r) => (timer = setTimeout(r, left)))]);
        clearTimeout(timer);
      }
    },
  };
}
