/**
 * The delivery worker: claims due outbox rows, sends after the claim
 * committed, records each outcome in a second statement.
 *
 * Wake-ups: LISTEN `deliveries` (the NOTIFY that `fanOutEvent` issues inside
 * the event's transaction arrives at commit, so a first attempt leaves well
 * under a second later), plus a Croner poll every WEBHOOK_POLL_SECONDS
 * (default 1) as the backstop for retries coming due, missed notifications
 * and reconnects (overrun-protected). Any number of processes can run one:
 * the claim uses SKIP LOCKED.
 */
import { Cron } from "croner";
import type postgres from "postgres";
import type { AppDeps } from "../../deps.ts";
import { systemResolver, type Resolver } from "./address-guard.ts";
import { senderFromConfig, sendAttempt } from "./attempt.ts";
import { MAX_REDIRECTS } from "./http.ts";
import { claimDue, DEACTIVATE_AFTER_FAILURES, DELIVERIES_CHANNEL, recordOutcomes, type ClaimedDelivery, type Outcome, type OutcomeItem } from "./outbox.ts";
import { dataFromShipment } from "./payload.ts";
import { decryptSecret } from "../../secrets/cipher.ts";
import { eventIdentity } from "./replay.ts";
import { planOf } from "../../domain/plans.ts";
import { observeDelivery } from "../metrics/registry.ts";

/** Attempts per delivery (spec: Delivery rules 2: up to six attempts in all). */
export const MAX_ATTEMPTS = 6;

export interface WorkerOptions {
  /** Connection used for claims, outcomes and LISTEN; default `deps.db.$client`. */
  sql?: postgres.Sql;
  /** Host resolver for the address check; default the system resolver. */
  resolver?: Resolver;
  /** Deliveries in flight at once per process (default 64). */
  concurrency?: number;
  /** Croner pattern of the backstop poll (default every WEBHOOK_POLL_SECONDS). */
  pollPattern?: string;
  /** Free slots that trigger a claim (default {@link REFILL_FRACTION} of `concurrency`). */
  refillAt?: number;
  /** Outcomes per record transaction at most (default {@link RECORD_BATCH}). */
  recordBatch?: number;
  /** Record transactions in flight at once (default {@link RECORD_FLUSHES}). */
  recordFlushes?: number;
}

/**
 * Pipeline tuning, measured with `bun run bench:deliver` (docs/webhooks.md, Benchmark):
 * claim again once a quarter of the slots are free, so a claim is in flight while the
 * other attempts still run and the pipeline never drains to refill.
 */
export const REFILL_FRACTION = 1 / 4;
/** Outcomes written per record transaction at most (one WAL flush for the lot). */
export const RECORD_BATCH = 200;
/** Record transactions in flight at once: commits overlap instead of queueing. */
export const RECORD_FLUSHES = 4;

export interface DeliveryWorker {
  /** Subscribes to NOTIFY and starts the poll. Resolves once listening. */
  start(): Promise<void>;
  /** Stops claiming, then waits up to `timeout` ms (default 10,000) for in-flight attempts to be recorded. */
  stop(opts?: { timeout?: number }): Promise<void>;
  /** Processes every delivery due now (by `deps.clock`) and waits for the outcomes; returns how many were processed. */
  runOnce(): Promise<number>;
}

/**
 * Creates a worker (accepts the whole `AppDeps`). `deps.clock` decides what is due and when retries come
 * due (`WEBHOOK_RETRY_SCHEDULE` seconds after attempts 1..5).
 */
export type WorkerDeps = Pick<AppDeps, "config" | "db" | "clock" | "log" | "secretsKey"> & WorkerOptions;

export function createDeliveryWorker(deps: WorkerDeps): DeliveryWorker {
  const sql = deps.sql ?? deps.db.$client;
  const log = deps.log.child({ component: "webhook-worker" });
  const sender = senderFromConfig(deps, deps.resolver ?? systemResolver);
  const concurrency = deps.concurrency ?? 64;
  const refillAt = Math.max(1, deps.refillAt ?? Math.floor(concurrency * REFILL_FRACTION));
  const recordBatch = deps.recordBatch ?? RECORD_BATCH;
  const recordFlushes = deps.recordFlushes ?? RECORD_FLUSHES;
  const schedule = deps.config.webhookRetryScheduleSeconds;
  // A lease must outlive the slowest attempt: every hop may use the whole timeout; LEASE_SLACK_SECONDS on top.
  const leaseMs = (MAX_REDIRECTS + 1) * deps.config.webhookTimeoutMs + deps.config.leaseSlackSeconds * 1000;

  let running = false;
  let pumping = false;
  let again = false;
  // The last claim came back short: nothing more is due until a NOTIFY or the poll says otherwise,
  // so finishing attempts do not each send a claim that finds nothing.
  let drained = false;
  let backoffMs = 0;
  let pausedUntil = 0;
  let cron: Cron | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  const inFlight = new Set<Promise<void>>();

  /** Decides the row's fate and records it; a lost lease is logged and dropped silently (the new owner records). */
  async function deliver(row: ClaimedDelivery): Promise<void> {
    const attempt = row.attempts + 1;
    const skip = skipReason(row);
    let outcome: Outcome;
    if (skip) outcome = { state: "skipped", attempts: row.attempts, nextAttemptAt: null, statusCode: null, error: skip, hops: [] };
    else {
      const shipment = row.shipment;
      const sent = await sendAttempt(sender, {
        webhookId: row.webhook_id,
        url: row.url,
        event: row.event_type,
        mode: row.mode,
        attempt,
        enqueuedAt: new Date(row.enqueued_at),
        data: (enq) => row.synthetic_data ?? dataFromShipment(shipment!, enq),
        // Read per attempt, from the claim: a rotation committed before the claim is always used.
        secret: decryptSecret(deps.secretsKey, row.account_id, row.secret_enc!),
        ...eventIdentity(row, deps.clock.now()),
      });
      const now = deps.clock.now();
      const base = { attempts: attempt, statusCode: sent.statusCode, error: sent.error, hops: sent.hops };
      if (sent.kind === "delivered") outcome = { ...base, state: "delivered", nextAttemptAt: null };
      else if (sent.kind === "dropped") outcome = { ...base, state: "dropped", nextAttemptAt: null };
      else if (attempt >= MAX_ATTEMPTS) outcome = { ...base, state: "abandoned", nextAttemptAt: null };
      // Retry n comes due schedule[n - 1] seconds after attempt n (spec: Delivery rules 2; config validates five entries).
      else outcome = { ...base, state: "pending", nextAttemptAt: new Date(now + schedule[Math.min(attempt, schedule.length) - 1]! * 1000) };
    }
    const res = await record(row, outcome);
    if (res.recorded) observeDelivery(row, outcome, res, deps.clock.now());
    if (!res.recorded) log.warn("delivery lease lost before recording; the new owner records", { delivery_id: row.id });
    if (res.deactivated) log.warn(`webhook deactivated after ${DEACTIVATE_AFTER_FAILURES} consecutive failed deliveries`, { webhook_id: row.webhook_id });
  }

  // Outcomes finishing while a batch is being written wait for the next one:
  // under load one transaction records many deliveries (see recordOutcomes).
  const queue: { item: OutcomeItem; resolve: (r: { recorded: boolean; deactivated: boolean }) => void; reject: (e: unknown) => void }[] = [];
  let flushing = 0;
  function record(row: ClaimedDelivery, outcome: Outcome): Promise<{ recorded: boolean; deactivated: boolean }> {
    return new Promise((resolve, reject) => {
      queue.push({ item: { delivery: row, outcome }, resolve, reject });
      void flush();
    });
  }
  async function flush(): Promise<void> {
    if (flushing >= recordFlushes) return;
    flushing++;
    try {
      while (queue.length) {
        const batch = queue.splice(0, recordBatch);
        try {
          const r = await recordOutcomes(sql, batch.map((b) => b.item), deps.clock.now());
          for (const b of batch) b.resolve({ recorded: r.recorded.has(b.item.delivery.id), deactivated: r.deactivated.includes(b.item.delivery.webhook_id) });
        } catch (e) {
          for (const b of batch) b.reject(e);
        }
      }
    } finally {
      flushing--;
    }
  }

  function skipReason(row: ClaimedDelivery): string | null {
    if (row.webhook_status !== "active") return "webhook_deactivated";
    if (row.mode === "live") {
      if (row.webhook_mode !== "live") return "webhook_not_live";
      if (!row.webhook_events.includes(row.event_type)) return "event_unsubscribed";
      if (!planOf(row.plan).live_webhooks) return "plan_without_live_webhooks";
      if (!row.shipment) return "shipment_gone";
    }
    if (!row.secret_enc) return "no_secret";
    return null;
  }

  function track(p: Promise<void>): void {
    inFlight.add(p);
    p.finally(() => {
      inFlight.delete(p);
      if (running && !drained) void pump();
    });
  }

  const safeDeliver = (row: ClaimedDelivery) =>
    deliver(row).catch((e) => {
      // The row keeps its lease and is retried when it runs out (at-least-once).
      log.error("delivery failed to record", { delivery_id: row.id, error: e as Error });
    });

  /** Keeps up to `concurrency` attempts in flight while due rows exist. */
  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    if (Date.now() < pausedUntil) return;
    pumping = true;
    try {
      do {
        again = false;
        // Refill once `refillAt` slots are free: the next batch is claimed while the rest of the
        // pipeline still runs, and one claim statement serves many finished attempts.
        while (running && !drained && concurrency - inFlight.size >= refillAt) {
          const want = concurrency - inFlight.size;
          const rows = await claimDue(sql, deps.clock.now(), want, leaseMs);
          backoffMs = 0;
          for (const r of rows) track(safeDeliver(r));
          if (rows.length < want) drained = true;
        }
      } while (again && running);
    } catch (e) {
      // Database down or restarting: back off (1 s doubling to 30 s); the poll resumes us.
      backoffMs = Math.min(30_000, Math.max(1_000, backoffMs * 2));
      pausedUntil = Date.now() + backoffMs;
      log.warn("delivery claim failed; backing off", { ms: backoffMs, error: e as Error });
    } finally {
      pumping = false;
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      if (deps.config.webhookAllowPrivateCidrs.length)
        log.warn("WEBHOOK_ALLOW_PRIVATE_CIDRS is set: webhook deliveries may reach these private ranges", { cidrs: deps.config.webhookAllowPrivateCidrs });
      const wake = () => {
        drained = false;
        return pump();
      };
      const sub = await sql.listen(DELIVERIES_CHANNEL, () => void wake(), () => void wake());
      unlisten = sub.unlisten;
      cron = deps.pollPattern
        ? new Cron(deps.pollPattern, { protect: true }, wake)
        : new Cron("* * * * * *", { protect: true, interval: deps.config.webhookPollSeconds }, wake);
      void wake();
    },
    async stop(opts = {}) {
      running = false;
      cron?.stop();
      cron = undefined;
      await unlisten?.().catch(() => {});
      unlisten = undefined;
      const timeout = opts.timeout ?? 10_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => (timer = setTimeout(r, timeout)))]);
      clearTimeout(timer);
      await sender.close();
    },
    async runOnce() {
      let total = 0;
      for (;;) {
        const rows = await claimDue(sql, deps.clock.now(), concurrency, leaseMs);
        if (rows.length === 0) return total;
        total += rows.length;
        await Promise.all(rows.map(safeDeliver));
      }
    },
  };
}

