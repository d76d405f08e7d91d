/**
 * The alert email sender, a pipeline of the job runner (src/jobs/runner.ts): claim due alerts, send through SMTP,
 * record the outcome; at least once, by lease, with a stable Message-ID (docs/alerts.md#delivery-the-alerts-outbox).
 * Times are the injected clock's.
 */
import type postgres from "postgres";
import { withoutSecrets } from "../../config/secrets.ts";
import type { CoreDeps } from "../../core-deps.ts";
import { frag, run } from "../../jobs/fragment.ts";
import { ALERT_MAX_ATTEMPTS, ALERT_RETRY_BASE_MS, ALERT_RETRY_MAX_MS } from "../../domain/alerts.ts";
import { defineQueue } from "../../jobs/queue.ts";
import { createRunner } from "../../jobs/runner.ts";
import { retryAfter, type RetryPolicy } from "../../jobs/retry.ts";
import { observeAlertEmail } from "../metrics/registry.ts";
import { decryptSecret } from "../../secrets/cipher.ts";
import { foldAlert, foldedInto, takeSlot } from "./limits.ts";
import {
  alertFrom,
  composeAlert,
  smtpTransport,
  SMTP_TIMEOUT_MS,
  type AlertFacts,
  type MailTransport,
} from "./mail.ts";
import { isLimitedKind, type AlertKind } from "./model.ts";

/** The alerts' retry policy (src/domain/alerts.ts). */
const ALERT_RETRY: RetryPolicy = {
  maxAttempts: ALERT_MAX_ATTEMPTS,
  baseMs: ALERT_RETRY_BASE_MS,
  maxMs: ALERT_RETRY_MAX_MS,
};
/** How long a claim holds an alert (longer than the SMTP timeouts), ms. */
export const LEASE_MS = 4 * SMTP_TIMEOUT_MS;

export interface ClaimedAlert {
  id: number;
  account_id: string;
  kind: AlertKind;
  details: Record<string, unknown>;
  /** Tries so far, this one included (the claim counts it). */
  attempts: number;
  /** The lease's end as the claim stamped it (ISO): the token every record after the claim carries. */
  lease_until: string;
  created_at: string;
  recipient: string;
  disabled: boolean;
}

/**
 * `alerts` on the claim engine: the lease is proven by its own end; the claim counts the try and moves
 * `next_attempt_at` to the lease's end, so an older release's claim (which reads no lease) skips the row.
 */
const alertQueue = defineQueue<ClaimedAlert>("alerts", {
  key: "id",
  token: "lease",
  due: "next_attempt_at",
  live: "state in ('pending', 'queued')",
  tries: "attempts",
  dueFollowsLease: true,
  returning: "q.id, q.account_id, q.kind, q.details, q.attempts, q.created_at",
});

/** Claims up to `limit` alerts due at `nowMs` (ms since the epoch) in ONE statement, with recipient and opt-out. */
export async function claimAlerts(
  sql: postgres.Sql,
  nowMs: number,
  limit: number,
  leaseMs = LEASE_MS,
): Promise<ClaimedAlert[]> {
  const claimed = alertQueue.claimStatement({
    nowMs,
    limit,
    leaseMs,
    owner: "",
    where: frag`state in ('pending', 'queued')`,
  });
  const rows = await run<Omit<ClaimedAlert, "lease_until">[]>(
    sql,
    frag`with u as (${claimed})
    select u.*,
      case when u.kind = 'address_confirmation' then u.details->>'email' else coalesce(s.email, acc.email) end as recipient,
      coalesce(coalesce(u.details->>'kind', u.kind) = any(s.disabled_kinds) and u.kind <> 'address_confirmation', false) as disabled
    from u join accounts acc on acc.id = u.account_id left join alert_settings s on s.account_id = u.account_id`,
  );
  const lease = alertQueue.leaseToken({ nowMs, leaseMs, owner: "" });
  return rows.map((r) => ({ ...r, lease_until: lease }));
}

/** Records a claimed alert as `sent` to `recipient` at `nowMs`, or `skipped` (kind turned off); nothing if the lease was lost. */
async function completeAlert(
  sql: postgres.Sql,
  a: Pick<ClaimedAlert, "id" | "lease_until">,
  state: "sent" | "skipped",
  recipient: string,
  nowMs: number,
): Promise<void> {
  observeAlertEmail(state);
  // A confirmation's token leaves the row once sent: the link table keeps only its hash.
  await alertQueue.settle(
    sql,
    a.id,
    a.lease_until,
    frag`state = ${state}, recipient = ${recipient}, sent_at = ${new Date(nowMs).toISOString()}, last_error = null,
      details = details - 'token'`,
  );
}

/** Records a failed send at `nowMs`: due again after {@link ALERT_RETRY}'s wait, or `failed` after its last try; nothing if the lease was lost. */
async function failAlert(
  sql: postgres.Sql,
  a: Pick<ClaimedAlert, "id" | "lease_until" | "attempts">,
  error: string,
  nowMs: number,
): Promise<void> {
  const { giveUp, nextAtMs } = retryAfter(ALERT_RETRY, a.attempts, nowMs);
  observeAlertEmail(giveUp ? "failed" : "retried");
  await alertQueue.settle(
    sql,
    a.id,
    a.lease_until,
    frag`state = ${giveUp ? "failed" : frag`state`}, next_attempt_at = ${new Date(nextAtMs).toISOString()},
      last_error = ${error.slice(0, 500)}`,
  );
}

/** Gives back claimed alerts never tried: due at `nowMs`, their try uncounted (a first try still takes its slot). */
async function releaseAlerts(sql: postgres.Sql, rows: ClaimedAlert[], nowMs: number): Promise<void> {
  const due = new Date(nowMs).toISOString();
  for (const a of rows)
    await alertQueue.settle(sql, a.id, a.lease_until, frag`attempts = attempts - 1, next_attempt_at = ${due}`);
}

/**
 * The webhook's last failed attempts up to its deactivation at `at`, newest first (for the deactivation email): real
 * attempts only (delivery_attempts: an answer, or a try to reach the receiver), never the deliveries skipped after.
 */
async function lastErrors(sql: postgres.Sql, webhookId: string, at: string | undefined) {
  return sql<{ at: string; status: number | null; error: string | null }[]>`
    select a.started_at as at, a.status_code as status, a.error
    from (select id from deliveries where webhook_id = ${webhookId} and attempts > 0
            and created_at <= coalesce(${at ?? null}::timestamptz, 'infinity')
          order by created_at desc limit 20) d
    join delivery_attempts a on a.delivery_id = d.id
    where a.error is not null or a.status_code is null or a.status_code >= 400
    order by a.started_at desc limit 3`;
}

export interface AlertSender {
  /** Claims and sends every due alert, batch after batch; resolves with the number handled. @throws when a claim fails */
  poll(): Promise<number>;
  /** Stops claiming, gives back alerts not started, waits for sends in flight (at most `timeout` ms), closes SMTP. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

export interface AlertSenderOptions {
  /** Default: the SMTP_URL transport. */
  transport?: MailTransport;
  /** Alerts per claim (default 20). */
  batch?: number;
  /** Sends in flight at once (default 4); one at a time per account, so its limit and digest see them in order. */
  concurrency?: number;
}

/** The sender of one worker process. @throws Error when SMTP_URL is unset and no transport is given. */
export function createAlertSender(deps: CoreDeps, opts: AlertSenderOptions = {}): AlertSender {
  const transport = opts.transport ?? smtpTransport(deps.config);
  const sql = deps.db.$client;
  const from = alertFrom(deps.config);
  const host = new URL(deps.config.publicBaseUrl).hostname;
  const log = deps.log.child({ component: "alerts" });
  const now = () => deps.clock.now();

  /** What the alert's text needs beyond its row; undefined: nothing left to send (an empty digest). */
  async function factsOf(a: ClaimedAlert): Promise<AlertFacts | undefined> {
    const facts: AlertFacts = { id: a.id, kind: a.kind, details: a.details, createdAt: new Date(a.created_at) };
    if (a.kind === "webhook_deactivated")
      facts.lastErrors = await lastErrors(sql, String(a.details.webhook_id), a.details.at as string | undefined);
    if (a.kind === "digest") {
      facts.folded = await foldedInto(sql, a.id);
      if (facts.folded.length === 0) return undefined;
    }
    if (a.kind === "address_confirmation")
      facts.token = decryptSecret(deps.secretsKey, a.account_id, String(a.details.token));
    return facts;
  }

  async function sendOne(a: ClaimedAlert): Promise<void> {
    if (a.disabled) return completeAlert(sql, a, "skipped", a.recipient, now());
    // Counted once, at the first attempt: a retry after an SMTP failure spends no second slot.
    if (isLimitedKind(a.kind) && a.attempts === 1) {
      const slot = await takeSlot(sql, a.account_id, a.kind, now());
      if (!slot.ok && (await foldAlert(sql, a, slot)) !== "busy") return;
    }
    try {
      const facts = await factsOf(a);
      if (!facts) return completeAlert(sql, a, "skipped", a.recipient, now());
      const m = composeAlert(facts, deps.config.publicBaseUrl);
      await transport.sendMail({
        from,
        to: a.recipient,
        subject: m.subject,
        text: m.text,
        messageId: `<alert-${a.id}.${a.account_id}@${host}>`,
      });
    } catch (e) {
      // An SMTP server's answer can quote what it was sent; configuration secrets never reach the log or the row.
      const error = withoutSecrets(e instanceof Error ? e.message : String(e), deps.config);
      log.warn("alert email not sent", { alert_id: a.id, kind: a.kind, attempt: a.attempts, error });
      return failAlert(sql, a, error, now());
    }
    await completeAlert(sql, a, "sent", a.recipient, now());
  }

  const runner = createRunner<ClaimedAlert>({
    name: "alerts",
    clock: deps.clock,
    log,
    concurrency: opts.concurrency ?? 4,
    keyOf: (a) => a.account_id,
    prefetch: 0,
    refillAt: 1,
    drainBatch: opts.batch ?? 20,
    // A claimed alert may wait for its account's earlier ones half the lease: its send still fits after.
    maxWaitMs: LEASE_MS / 2,
    claim: (limit, nowMs) => claimAlerts(sql, nowMs, limit),
    // A database error while recording: the lease runs out and the alert is claimed again (same Message-ID).
    task: (a) =>
      sendOne(a).catch((e) => log.error("alert outcome not recorded", { alert_id: a.id, error: e as Error })),
    release: (rows) =>
      releaseAlerts(sql, rows, now()).catch((e) =>
        log.warn("claimed alerts not released; they are claimed again when the lease runs out", { error: e as Error }),
      ),
  });

  return {
    poll: () => runner.drain(),
    async stop(o = {}) {
      await runner.stop(o);
      transport.close();
    },
  };
}
