/**
 * The delivery worker: a pipeline of the job runner (src/jobs/runner.ts) that claims ({@link claimDue}), attempts
 * ({@link outcomeOf}) and records in batches (outcome-batcher.ts). Woken by LISTEN and the scheduler's poll, it owns
 * no timer (docs/webhooks.md, "The worker"; logs: docs/logging.md).
 */
import type postgres from "postgres";
import type { AppDeps } from "../../../deps.ts";
import type { Logger } from "../../../lib/log.ts";
import { defined } from "../../../lib/defined.ts";
import { systemResolver, type Resolver } from "./address-guard.ts";
import { senderFromConfig, sendAttempt } from "./attempt.ts";
import { MAX_REDIRECTS } from "./http.ts";
import { claimDue, releaseLeases, DELIVERIES_CHANNEL, type ClaimedDelivery, type Outcome } from "./outbox.ts";
import { afterAttempt, DEACTIVATE_AFTER_FAILURES, MAX_ATTEMPTS } from "../../../domain/delivery.ts";
import { createOutcomeBatcher, type RecordResult } from "./outcome-batcher.ts";
import { createRunner } from "../../../jobs/runner.ts";
import type { WebhookSender } from "./http.ts";
import { dataFromShipment } from "./payload.ts";
import { publicUrlOf } from "../../following/public-links.ts";
import { decryptSecret } from "../../../secrets/cipher.ts";
import { openHeaders } from "../headers.ts";
import { eventIdentity } from "../replay.ts";
import { planOf } from "../../../domain/plans.ts";
import { isCourierEvent } from "../../../domain/events.ts";
import { observeDelivery, observeFirstAttempt } from "../../metrics/registry.ts";

export interface WorkerOptions {
  /** Connection used for claims, outcomes and LISTEN; default `deps.db.$client`. */
  sql?: postgres.Sql;
  resolver?: Resolver;
  /** Deliveries in flight at once per process (default 64). */
  concurrency?: number;
  /** Claimed rows waiting for a slot at most (default {@link PREFETCH_FACTOR} × `concurrency`). */
  prefetch?: number;
  /** Claimed rows that may wait however slowly attempts finish (default {@link MIN_PREFETCH_FACTOR} × `concurrency`). */
  minPrefetch?: number;
  /** Rows that must fit below the high-water mark before a claim (default {@link REFILL_FRACTION} of `concurrency`). */
  refillAt?: number;
  recordBatch?: number;
  recordFlushes?: number;
  /** Outcomes waiting past which a finished attempt keeps its slot (default `recordBatch × recordFlushes`). */
  maxUnrecorded?: number;
}

/** Pipeline tuning, measured with `bun run bench:deliver` (docs/webhooks.md, "The worker": Refill). */
const PREFETCH_FACTOR = 8;
const MIN_PREFETCH_FACTOR = 2;
const REFILL_FRACTION = 1;
/** Outcomes per record statement at most (one WAL flush for the lot). */
const RECORD_BATCH = 500;
/** Record statements in flight: one (group commit); two cost PostgreSQL more CPU per delivery. */
const RECORD_FLUSHES = 1;

export interface DeliveryWorker {
  /** Subscribes to NOTIFY and claims what is due. Resolves once listening. */
  start(): Promise<void>;
  /** The scheduler's backstop tick: claims what is due now, as a NOTIFY would. Never throws. */
  poll(): Promise<void>;
  /** Stops claiming, then waits up to `timeout` ms (default 10,000) for in-flight attempts to be recorded. */
  stop(opts?: { timeout?: number }): Promise<void>;
  /** Processes every delivery due now and waits for the outcomes; returns how many (tests). */
  runOnce(): Promise<number>;
}

/** What a worker needs; `deps.clock` decides what is due and when retries come due. */
export type WorkerDeps = Pick<AppDeps, "config" | "db" | "clock" | "log" | "secretsKey"> & WorkerOptions;

/** Why a claimed row is recorded as skipped without an attempt, or null to send it. */
function skipReason(row: ClaimedDelivery): string | null {
  if (row.webhook_status !== "active") return "webhook_deactivated";
  if (row.mode === "live") {
    if (row.webhook_mode !== "live") return "webhook_not_live";
    if (!row.webhook_events.includes(row.event_type)) return "event_unsubscribed";
    if (!planOf(row.plan).live_webhooks) return "plan_without_live_webhooks";
    if (!row.shipment && !isCourierEvent(row.event_type)) return "shipment_gone";
  }
  if (!row.secret_enc) return "no_secret";
  return null;
}

/** Skips the row ({@link skipReason}) or sends one attempt, judged by `afterAttempt` (src/domain/delivery.ts). */
async function outcomeOf(
  deps: Pick<WorkerDeps, "clock" | "config" | "secretsKey">,
  sender: WebhookSender,
  row: ClaimedDelivery,
): Promise<Outcome> {
  const skip = skipReason(row);
  if (skip)
    return { state: "skipped", attempts: row.attempts, nextAttemptAt: null, statusCode: null, error: skip, hops: [] };
  const attempt = row.attempts + 1;
  if (attempt === 1) observeFirstAttempt(row.mode, row.enqueued_at, deps.clock.now());
  const shipment = row.shipment;
  const sent = await sendAttempt(sender, {
    webhookId: row.webhook_id,
    url: row.url,
    event: row.event_type,
    mode: row.mode,
    attempt,
    enqueuedAt: new Date(row.enqueued_at),
    // A test fire stored before payloads carried the follow data gets its empty values.
    data: (enq) => {
      const synthetic = row.synthetic_data;
      if (synthetic && !("checkpoints" in synthetic)) return synthetic;
      if (synthetic)
        return {
          ...synthetic,
          reference: synthetic.reference ?? null,
          metadata: synthetic.metadata ?? {},
          stalled: synthetic.stalled ?? false,
        };
      // skipReason answered "shipment_gone" for a tracking event without its shipment.
      const s = defined(shipment, "the delivery's shipment");
      return dataFromShipment({ ...s, public_url: publicUrlOf(deps, row.account_id, s.public_link) }, enq);
    },
    // Read per attempt, from the claim: a rotation committed before the claim is always used.
    secret: decryptSecret(deps.secretsKey, row.account_id, defined(row.secret_enc, "the webhook's signing secret")),
    headers: openHeaders(deps.secretsKey, row.webhook_id, row.headers_enc),
    sequence: row.sequence,
    deliveryId: row.id,
    traceParent: row.trace_parent,
    ...eventIdentity(row, deps.clock.now()),
  });
  const verdict = afterAttempt(sent.kind, attempt, deps.clock.now(), deps.config.webhookRetryScheduleSeconds);
  return { attempts: attempt, statusCode: sent.statusCode, error: sent.error, hops: sent.hops, ...verdict };
}

const FAILED: ReadonlySet<Outcome["state"]> = new Set(["pending", "abandoned", "dropped"]);

function hostOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).host : undefined;
}

/** Log fields of one attempt (docs/logging.md, Delivery lines): never the URL's path, the secret or a body. */
function attemptFields(
  row: Pick<ClaimedDelivery, "id" | "webhook_id" | "mode" | "event_type" | "url">,
  outcome: Outcome,
): Record<string, unknown> {
  return {
    webhook_id: row.webhook_id,
    delivery_id: row.id,
    attempt: outcome.attempts,
    max_attempts: MAX_ATTEMPTS,
    mode: row.mode,
    event: row.event_type,
    host: hostOf(row.url),
    ...(outcome.statusCode !== null ? { status: outcome.statusCode } : {}),
    ...(outcome.error !== null ? { error: outcome.error } : {}),
    next_attempt_at: outcome.nextAttemptAt?.toISOString() ?? null,
  };
}

/** Reports one recorded outcome: a delivery given up and a webhook deactivated are `error` lines. */
function reportRecorded(
  deps: Pick<WorkerDeps, "clock">,
  log: Logger,
  row: ClaimedDelivery,
  outcome: Outcome,
  res: RecordResult,
): void {
  if (res.recorded) {
    observeDelivery(row, outcome, res, deps.clock.now());
    if (outcome.state === "abandoned")
      log.error(`webhook delivery abandoned after ${outcome.attempts} failed attempts`, attemptFields(row, outcome));
    else if (outcome.state === "dropped")
      log.error(
        "webhook delivery dropped: the receiver's address is not allowed; not retried",
        attemptFields(row, outcome),
      );
  } else log.warn("delivery lease lost before recording; the new owner records", { delivery_id: row.id });
  if (res.deactivated)
    log.error(`webhook deactivated after ${DEACTIVATE_AFTER_FAILURES} consecutive failed deliveries`, {
      webhook_id: row.webhook_id,
      delivery_id: row.id,
      host: hostOf(row.url),
    });
}

function pumpTuning(deps: WorkerOptions, concurrency: number) {
  const prefetch = Math.max(0, deps.prefetch ?? concurrency * PREFETCH_FACTOR);
  return {
    refillAt: Math.max(1, deps.refillAt ?? Math.floor(concurrency * REFILL_FRACTION)),
    prefetch,
    minPrefetch: Math.min(prefetch, deps.minPrefetch ?? concurrency * MIN_PREFETCH_FACTOR),
  };
}

/** One attempt: its slot frees once made, the outcome waits for the batcher (the slot too, past `maxUnrecorded`). */
function createDeliver(
  deps: WorkerDeps,
  log: Logger,
  sender: WebhookSender,
  batcher: ReturnType<typeof createOutcomeBatcher>,
  maxUnrecorded: number,
) {
  // The row keeps its lease and is retried when it runs out (at-least-once).
  const failed = (row: ClaimedDelivery, e: unknown) =>
    log.error("delivery failed to record", { delivery_id: row.id, error: e as Error });
  return async (row: ClaimedDelivery): Promise<void> => {
    let outcome: Outcome;
    try {
      outcome = await outcomeOf(deps, sender, row);
    } catch (e) {
      return failed(row, e);
    }
    if (FAILED.has(outcome.state) && log.enabled("warn"))
      log.warn("webhook delivery attempt failed", attemptFields(row, outcome));
    const recording = batcher.record(row, outcome).then(
      (res) => reportRecorded(deps, log, row, outcome, res),
      (e) => failed(row, e),
    );
    if (batcher.outstanding > maxUnrecorded) await recording;
  };
}

/** Creates a worker (accepts the whole `AppDeps`) from its parts: the claimer, the attempt and the outcome batcher. */
export function createDeliveryWorker(deps: WorkerDeps): DeliveryWorker {
  const sql = deps.sql ?? deps.db.$client;
  const log = deps.log.child({ component: "webhook-worker" });
  const sender = senderFromConfig(deps, deps.resolver ?? systemResolver);
  const concurrency = deps.concurrency ?? 64;
  // A lease must outlive the slowest attempt: every hop may use the whole timeout; LEASE_SLACK_SECONDS on top.
  const leaseMs = (MAX_REDIRECTS + 1) * deps.config.webhookTimeoutMs + deps.config.leaseSlackSeconds * 1000;
  const batcher = createOutcomeBatcher(sql, deps.clock, {
    batch: deps.recordBatch ?? RECORD_BATCH,
    flushes: deps.recordFlushes ?? RECORD_FLUSHES,
  });
  const maxUnrecorded =
    deps.maxUnrecorded ?? (deps.recordBatch ?? RECORD_BATCH) * (deps.recordFlushes ?? RECORD_FLUSHES);
  const deliver = createDeliver(deps, log, sender, batcher, maxUnrecorded);
  const release = (rows: ClaimedDelivery[]) =>
    releaseLeases(sql, rows).catch((e) =>
      log.warn("claimed deliveries not released; they are claimed again when the lease runs out", {
        error: e as Error,
      }),
    );
  // A row may wait for a slot half the lease's slack: its attempt and record still fit in the lease.
  const maxWaitMs = (deps.config.leaseSlackSeconds * 1000) / 2;
  const runner = createRunner<ClaimedDelivery>({
    name: "delivery",
    clock: deps.clock,
    log,
    concurrency,
    ...pumpTuning(deps, concurrency),
    maxWaitMs,
    listen: { sql, channel: DELIVERIES_CHANNEL },
    claim: (limit, nowMs) => claimDue(sql, nowMs, limit, leaseMs),
    task: deliver,
    release,
    settled: () => batcher.settled(),
  });
  let started = false;

  return {
    async start() {
      if (started) return;
      started = true;
      if (deps.config.webhookAllowPrivateCidrs.length)
        log.warn("WEBHOOK_ALLOW_PRIVATE_CIDRS is set: webhook deliveries may reach these private ranges", {
          cidrs: deps.config.webhookAllowPrivateCidrs,
        });
      await runner.start();
    },
    poll: () => runner.wake(),
    async stop(opts = {}) {
      started = false;
      await runner.stop(opts);
      await sender.close();
    },
    runOnce: () => runner.drain(),
  };
}
