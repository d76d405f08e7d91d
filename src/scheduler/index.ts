/**
 * In-process jobs (ROLE=all|worker): re-check, delivery, housekeeping, alerts, predictions, stalls and NDR actions. The scheduler
 * owns every timer of the background work; a failing run pauses the job (docs/architecture.md, "Scheduler").
 */
import { Cron } from "croner";
import type { AppDeps } from "../deps.ts";
import { runHousekeeping, type HousekeepingOptions } from "./housekeeping.ts";
import {
  createRecheckRunner,
  type RecheckOptions,
  type RecheckRunner,
  type RecheckStats,
} from "../modules/following/recheck.ts";
import { createDeliveryWorker, type DeliveryWorker, type WorkerOptions } from "../modules/webhooks/delivery/worker.ts";
import { settleWithin } from "../lib/settle.ts";
import { createAlertSender, type AlertSender, type AlertSenderOptions } from "../modules/alerts/sender.ts";
import { rebuildIfDue } from "../modules/predictions/daily.ts";
import { markStalled } from "../modules/following/stalls.ts";
import { evaluateHealth } from "../modules/courier-health/evaluate.ts";
import { fanOutCourierEvent } from "../modules/webhooks/delivery/outbox.ts";

import { processDueActions } from "../modules/actions/job.ts";

type JobName = "recheck" | "delivery" | "housekeeping" | "alerts" | "predictions" | "stalls" | "health" | "actions";
const ALL_JOBS: readonly JobName[] = [
  "recheck",
  "delivery",
  "housekeeping",
  "alerts",
  "predictions",
  "stalls",
  "health",
  "actions",
];

export interface Scheduler {
  /** Starts the jobs (the delivery worker's LISTEN included); resolves once they are running. */
  start(): Promise<void>;
  /** Stops the jobs and waits for running ones, at most `timeout` ms (default 10,000). */
  stop(opts?: { timeout?: number }): Promise<void>;
}

/** Jobs to run (default all) and each job's Croner pattern (defaults: docs/architecture.md, "Scheduler"). */
export interface SchedulerOptions {
  jobs?: readonly JobName[];
  recheckPattern?: string;
  deliveryPattern?: string;
  housekeepingPattern?: string;
  recheck?: RecheckOptions;
  delivery?: WorkerOptions;
  housekeeping?: HousekeepingOptions;
  /** The alerts job runs only with SMTP_URL or `alerts.transport`. */
  alertsPattern?: string;
  alerts?: AlertSenderOptions;
  predictionsPattern?: string;
  stallsPattern?: string;
  /** Courier health: flush this process's call buckets, then evaluate (one process at a time; default second 30). */
  healthPattern?: string;
  /** NDR actions: every 5 s unless given (docs/ndr-actions.md, "Sending"). */
  actionsPattern?: string;
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
  return pattern
    ? new Cron(pattern, { protect: true }, body)
    : new Cron("* * * * * *", { protect: true, interval: seconds }, body);
}

interface Running {
  runner?: RecheckRunner;
  worker?: DeliveryWorker;
  alerts?: AlertSender;
  housekeeping?: Promise<unknown>;
  predictions?: Promise<unknown>;
  stalls?: Promise<unknown>;
  health?: Promise<unknown>;
  actions?: Promise<unknown>;
}

async function tracked<T>(
  r: Running,
  key: "housekeeping" | "predictions" | "stalls" | "health" | "actions",
  p: Promise<T>,
): Promise<T> {
  r[key] = p;
  try {
    return await p;
  } finally {
    r[key] = undefined;
  }
}

/** The predictions rebuild: daily at 03:30 UTC (docs/predictions.md). */
export const PREDICTIONS_PATTERN = "0 30 3 * * *";
/**
 * UTC as a fixed offset, not `timezone: "UTC"`: the same runs whatever TZ the process has, without croner reaching
 * for `Intl` time zones (~1.3 MiB of idle RSS, docs/performance.md "Idle RSS").
 */
export const PREDICTIONS_CRON = { protect: true, utcOffset: 0 } as const;

type JobBuilder = (deps: AppDeps, opts: SchedulerOptions, r: Running) => Cron | Promise<Cron> | undefined;

/** The jobs in start order; a builder returns undefined when its job is off (alerts without SMTP). */
const BUILDERS: readonly [JobName, JobBuilder][] = [
  [
    "delivery",
    async (deps, opts, r) => {
      const w = createDeliveryWorker({ ...deps, ...opts.delivery });
      r.worker = w;
      await w.start();
      return every(
        opts.deliveryPattern,
        deps.config.webhookPollSeconds,
        guarded("delivery", deps, () => w.poll()),
      );
    },
  ],
  [
    "recheck",
    (deps, opts, r) => {
      const runner = createRecheckRunner(deps, opts.recheck);
      r.runner = runner;
      const body = guarded("recheck", deps, async () => {
        const stats = await runner.drain();
        opts.onDrain?.(stats);
      });
      return every(opts.recheckPattern, deps.config.recheckPollSeconds, body);
    },
  ],
  [
    "housekeeping",
    (deps, opts, r) =>
      new Cron(
        opts.housekeepingPattern ?? "0 */10 * * * *",
        { protect: true },
        guarded(
          "housekeeping",
          deps,
          async () => void (await tracked(r, "housekeeping", runHousekeeping(deps, opts.housekeeping))),
        ),
      ),
  ],
  [
    "alerts",
    (deps, opts, r) => {
      if (!deps.config.smtpUrl && !opts.alerts?.transport) return undefined;
      const a = createAlertSender(deps, opts.alerts);
      r.alerts = a;
      return every(
        opts.alertsPattern,
        5,
        guarded("alerts", deps, async () => void (await a.poll())),
      );
    },
  ],
  [
    "predictions",
    (deps, opts, r) =>
      new Cron(
        opts.predictionsPattern ?? PREDICTIONS_PATTERN,
        PREDICTIONS_CRON,
        guarded(
          "predictions",
          deps,
          async () =>
            void (await tracked(r, "predictions", rebuildIfDue({ ...deps, stats: deps.services.transitStats }))),
        ),
      ),
  ],
  [
    "stalls",
    (deps, opts, r) => {
      const body = guarded("stalls", deps, async () => {
        const index = await deps.services.transitStats.get();
        const res = await tracked(
          r,
          "stalls",
          markStalled(deps, (c, o, d) => index.stallThresholdS(c, o, d), deps.clock.now()),
        );
        if (res.stalled > 0) deps.log.info("stalled shipments marked", { component: "predictions", ...res });
      });
      return new Cron(opts.stallsPattern ?? "30 */10 * * * *", { protect: true }, body);
    },
  ],
  [
    "health",
    (deps, opts, r) => {
      const body = guarded("health", deps, async () => {
        const run = async () => {
          await deps.services.courierCalls.flush();
          const moved = await evaluateHealth(deps.db, deps.clock.now(), fanOutCourierEvent);
          for (const t of moved ?? []) deps.log.info("courier health changed", { component: "health", ...t });
          if (moved) await deps.services.courierHealth.refresh();
        };
        await tracked(r, "health", run());
      });
      return new Cron(opts.healthPattern ?? "30 * * * * *", { protect: true }, body);
    },
  ],
  [
    "actions",
    (deps, opts, r) =>
      every(
        opts.actionsPattern,
        5,
        guarded("actions", deps, async () => void (await tracked(r, "actions", processDueActions(deps)))),
      ),
  ],
];

/** Builds the jobs; nothing runs until `start()`. */
export function createScheduler(deps: AppDeps, opts: SchedulerOptions = {}): Scheduler {
  const jobs = new Set(opts.jobs ?? ALL_JOBS);
  let started = false;
  let crons: Cron[] = [];
  const r: Running = {};

  return {
    async start() {
      if (started) return;
      started = true;
      for (const [name, build] of BUILDERS) {
        const cron = jobs.has(name) ? await build(deps, opts, r) : undefined;
        if (cron) crons.push(cron);
      }
      deps.log.info("scheduler started", {
        component: "scheduler",
        jobs: [...jobs],
        owner: r.runner?.owner,
        lease_ms: r.runner?.leaseMs,
        recheck_interval_s: deps.config.recheckIntervalSeconds,
        retention_days: deps.config.retentionDays,
      });
    },
    async stop(o = {}) {
      const timeout = o.timeout ?? 10_000;
      const deadline = Date.now() + timeout;
      for (const c of crons) c.stop();
      crons = [];
      started = false;
      await Promise.all([r.runner?.stop({ timeout }), r.worker?.stop({ timeout }), r.alerts?.stop({ timeout })]);
      Object.assign(r, { runner: undefined, worker: undefined, alerts: undefined });
      if (r.housekeeping) await settleWithin(r.housekeeping, deadline - Date.now());
      if (r.predictions || r.stalls || r.health || r.actions)
        await settleWithin(
          [r.predictions, r.stalls, r.health, r.actions].filter((p) => p !== undefined),
          deadline - Date.now(),
        );
    },
  };
}
