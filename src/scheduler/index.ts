/**
 * In-process jobs (ROLE=all|worker, started by main.ts): re-check, delivery, housekeeping, alerts (with SMTP_URL),
 * predictions (daily transit statistics) and stalls (every 10 min). The scheduler owns every timer of the
 * background work; a failing run pauses the job (1 s doubling to 60 s). Why: docs/architecture.md#scheduler.
 */
import { Cron } from "croner";
import type { AppDeps } from "../deps.ts";
import { runHousekeeping, type HousekeepingOptions } from "./housekeeping.ts";
import { createRecheckRunner, type RecheckOptions, type RecheckRunner, type RecheckStats } from "../modules/following/recheck.ts";
import { createDeliveryWorker, type DeliveryWorker, type WorkerOptions } from "../modules/webhooks/delivery/worker.ts";
import { settleWithin } from "../lib/settle.ts";
import { createAlertSender, type AlertSender, type AlertSenderOptions } from "../modules/alerts/sender.ts";
import { rebuildIfDue } from "../modules/predictions/daily.ts";
import { markStalled } from "../modules/following/stalls.ts";

/** The scheduler's jobs. */
export type JobName = "recheck" | "delivery" | "housekeeping" | "alerts" | "predictions" | "stalls";
const ALL_JOBS: readonly JobName[] = ["recheck", "delivery", "housekeeping", "alerts", "predictions", "stalls"];

export interface Scheduler {
  /** Starts the jobs (the delivery worker's LISTEN included); resolves once they are running. */
  start(): Promise<void>;
  /** Stops the jobs and waits for running ones, at most `timeout` ms (default 10,000). */
  stop(opts?: { timeout?: number }): Promise<void>;
}

export interface SchedulerOptions {
  /** Jobs to run (default all three); a test of one job leaves the others out. */
  jobs?: readonly JobName[];
  /** Croner pattern of the re-check job (default every RECHECK_POLL_SECONDS). */
  recheckPattern?: string;
  /** Croner pattern of the delivery poll (default every WEBHOOK_POLL_SECONDS). */
  deliveryPattern?: string;
  /** Croner pattern of the housekeeping job (default every 10 minutes). */
  housekeepingPattern?: string;
  recheck?: RecheckOptions;
  delivery?: WorkerOptions;
  housekeeping?: HousekeepingOptions;
  /** Croner pattern of the alert emails (default every 5 s); the job runs only with SMTP_URL or `alerts.transport`. */
  alertsPattern?: string;
  alerts?: AlertSenderOptions;
  /** Croner pattern of the transit statistics rebuild (default daily at 03:30 UTC). */
  predictionsPattern?: string;
  /** Croner pattern of the stalled-shipments check (default every 10 minutes). */
  stallsPattern?: string;
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

/** An overrun-protected Croner job: on `pattern` when given, else every `seconds`. */
function every(pattern: string | undefined, seconds: number, body: () => Promise<void>): Cron {
  return pattern ? new Cron(pattern, { protect: true }, body) : new Cron("* * * * * *", { protect: true, interval: seconds }, body);
}

/** Builds the jobs; nothing runs until `start()`. */
export function createScheduler(deps: AppDeps, opts: SchedulerOptions = {}): Scheduler {
  const jobs = new Set(opts.jobs ?? ALL_JOBS);
  let started = false;
  let crons: Cron[] = [];
  let runner: RecheckRunner | undefined;
  let worker: DeliveryWorker | undefined;
  let housekeeping: Promise<unknown> | undefined;
  let alerts: AlertSender | undefined;
  let predictions: Promise<unknown> | undefined;
  let stalls: Promise<unknown> | undefined;

  function recheckJob(): Cron {
    const r = (runner = createRecheckRunner(deps, opts.recheck));
    const body = guarded("recheck", deps, async () => {
      const stats = await r.drain();
      opts.onDrain?.(stats);
    });
    return every(opts.recheckPattern, deps.config.recheckPollSeconds, body);
  }
  async function deliveryJob(): Promise<Cron> {
    const w = (worker = createDeliveryWorker({ ...deps, ...opts.delivery }));
    await w.start();
    return every(opts.deliveryPattern, deps.config.webhookPollSeconds, guarded("delivery", deps, () => w.poll()));
  }
  function housekeepingJob(): Cron {
    const body = guarded("housekeeping", deps, async () => {
      const p = runHousekeeping(deps, opts.housekeeping);
      housekeeping = p;
      await p.finally(() => (housekeeping = undefined));
    });
    return new Cron(opts.housekeepingPattern ?? "0 */10 * * * *", { protect: true }, body);
  }
  function predictionsJob(): Cron {
    const body = guarded("predictions", deps, async () => {
      const p = rebuildIfDue({ ...deps, stats: deps.services.transitStats });
      predictions = p;
      await p.finally(() => (predictions = undefined));
    });
    return new Cron(opts.predictionsPattern ?? "0 30 3 * * *", { protect: true, timezone: "UTC" }, body);
  }
  function stallsJob(): Cron {
    const body = guarded("stalls", deps, async () => {
      const index = await deps.services.transitStats.get();
      const p = markStalled(deps, (c, o, d) => index.stallThresholdS(c, o, d), deps.clock.now());
      stalls = p;
      const r = await p.finally(() => (stalls = undefined));
      if (r.stalled > 0) deps.log.info("stalled shipments marked", { component: "predictions", ...r });
    });
    return new Cron(opts.stallsPattern ?? "30 */10 * * * *", { protect: true }, body);
  }

  return {
    async start() {
      if (started) return;
      started = true;
      if (jobs.has("delivery")) crons.push(await deliveryJob());
      if (jobs.has("recheck")) crons.push(recheckJob());
      if (jobs.has("housekeeping")) crons.push(housekeepingJob());
      if (jobs.has("alerts") && (deps.config.smtpUrl || opts.alerts?.transport)) {
        const a = (alerts = createAlertSender(deps, opts.alerts));
        crons.push(every(opts.alertsPattern, 5, guarded("alerts", deps, async () => void (await a.poll()))));
      }
      if (jobs.has("predictions")) crons.push(predictionsJob());
      if (jobs.has("stalls")) crons.push(stallsJob());
      deps.log.info("scheduler started", { component: "scheduler", jobs: [...jobs], owner: runner?.owner, lease_ms: runner?.leaseMs, recheck_interval_s: deps.config.recheckIntervalSeconds, retention_days: deps.config.retentionDays });
    },
    async stop(o = {}) {
      const timeout = o.timeout ?? 10_000;
      const deadline = Date.now() + timeout;
      for (const c of crons) c.stop();
      crons = [];
      started = false;
      await Promise.all([runner?.stop({ timeout }), worker?.stop({ timeout }), alerts?.stop({ timeout })]);
      runner = worker = undefined;
      alerts = undefined;
      if (housekeeping) await settleWithin(housekeeping, deadline - Date.now());
      if (predictions || stalls) await settleWithin([predictions, stalls].filter((p) => p !== undefined), deadline - Date.now());
    },
  };
}
