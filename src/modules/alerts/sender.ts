/**
 * The alert email sender, run by the worker: claim due alerts, send through SMTP, record the outcome; at least once,
 * by lease, with a stable Message-ID (docs/alerts.md#delivery-the-alerts-outbox). Times are the database's `now()`.
 */
import type postgres from "postgres";
import { withoutSecrets } from "../../config/secrets.ts";
import type { CoreDeps } from "../../core-deps.ts";
import { settleWithin } from "../../lib/settle.ts";
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

/** Tries before an alert is given up (`failed`); the waits double from {@link RETRY_BASE_MS} to at most {@link RETRY_MAX_MS}. */
const MAX_ATTEMPTS = 10;
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 6 * 3_600_000;
/** How long a claim holds an alert (longer than the SMTP timeouts), ms. */
const LEASE_MS = 4 * SMTP_TIMEOUT_MS;

export interface ClaimedAlert {
  id: number;
  account_id: string;
  kind: AlertKind;
  details: Record<string, unknown>;
  attempts: number;
  /** Timestamps come as PostgreSQL's text (drizzle's parsers on the shared client): compared back exactly. */
  lease_until: string;
  created_at: string;
  recipient: string;
  disabled: boolean;
}

/** Claims up to `limit` due alerts in ONE statement (`skip locked`; `next_attempt_at` moved to the lease's end). */
export async function claimAlerts(sql: postgres.Sql, limit: number, leaseMs = LEASE_MS): Promise<ClaimedAlert[]> {
  return (await sql`
    with c as (
      select id from alerts where state in ('pending', 'queued') and next_attempt_at <= now()
      order by next_attempt_at limit ${limit} for update skip locked
    ), u as (
      update alerts a set attempts = a.attempts + 1, next_attempt_at = l.until, lease_until = l.until
      from c, (select now() + ${leaseMs} * interval '1 millisecond' as until) l
      where a.id = c.id
      returning a.id, a.account_id, a.kind, a.details, a.attempts, a.lease_until, a.created_at
    )
    select u.*,
      case when u.kind = 'address_confirmation' then u.details->>'email' else coalesce(s.email, acc.email) end as recipient,
      coalesce(coalesce(u.details->>'kind', u.kind) = any(s.disabled_kinds) and u.kind <> 'address_confirmation', false) as disabled
    from u join accounts acc on acc.id = u.account_id left join alert_settings s on s.account_id = u.account_id
  `) as unknown as ClaimedAlert[];
}

/** Records a claimed alert as `sent` to `recipient`, or `skipped` (kind turned off); nothing if the lease was lost. */
async function completeAlert(
  sql: postgres.Sql,
  a: Pick<ClaimedAlert, "id" | "lease_until">,
  state: "sent" | "skipped",
  recipient: string,
): Promise<void> {
  observeAlertEmail(state);
  // A confirmation's token leaves the row once sent: the link table keeps only its hash.
  await sql`update alerts set state = ${state}, recipient = ${recipient}, sent_at = now(), lease_until = null, last_error = null,
      details = details - 'token'
    where id = ${a.id} and lease_until = ${a.lease_until}`;
}

/** Records a failed send: due again after the backoff, or `failed` after {@link MAX_ATTEMPTS}; nothing if the lease was lost. */
async function failAlert(
  sql: postgres.Sql,
  a: Pick<ClaimedAlert, "id" | "lease_until" | "attempts">,
  error: string,
): Promise<void> {
  const giveUp = a.attempts >= MAX_ATTEMPTS;
  const waitMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (a.attempts - 1));
  observeAlertEmail(giveUp ? "failed" : "retried");
  await sql`update alerts set state = ${giveUp ? "failed" : sql`state`}, next_attempt_at = now() + ${waitMs} * interval '1 millisecond',
      lease_until = null, last_error = ${error.slice(0, 500)}
    where id = ${a.id} and lease_until = ${a.lease_until}`;
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
  /** Claims and sends every due alert, batch after batch; resolves with the number handled. */
  poll(): Promise<number>;
  /** Waits for a poll in flight (at most `timeout` ms) and closes the SMTP connection. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

export interface AlertSenderOptions {
  /** Default: the SMTP_URL transport. */
  transport?: MailTransport;
  batch?: number;
}

/** The sender of one worker process. @throws Error when SMTP_URL is unset and no transport is given. */
export function createAlertSender(deps: CoreDeps, opts: AlertSenderOptions = {}): AlertSender {
  const transport = opts.transport ?? smtpTransport(deps.config);
  const sql = deps.db.$client;
  const from = alertFrom(deps.config);
  const host = new URL(deps.config.publicBaseUrl).hostname;
  const log = deps.log.child({ component: "alerts" });
  let running: Promise<number> | undefined;

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
    if (a.disabled) return completeAlert(sql, a, "skipped", a.recipient);
    // Counted once, at the first attempt: a retry after an SMTP failure spends no second slot.
    if (isLimitedKind(a.kind) && a.attempts === 1) {
      const slot = await takeSlot(sql, a.account_id, a.kind);
      if (!slot.ok && (await foldAlert(sql, a, slot)) !== "busy") return;
    }
    try {
      const facts = await factsOf(a);
      if (!facts) return completeAlert(sql, a, "skipped", a.recipient);
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
      return failAlert(sql, a, error);
    }
    await completeAlert(sql, a, "sent", a.recipient);
  }

  async function drain(): Promise<number> {
    let n = 0;
    for (;;) {
      const batch = await claimAlerts(sql, opts.batch ?? 20);
      for (const a of batch) await sendOne(a);
      n += batch.length;
      if (batch.length < (opts.batch ?? 20)) return n;
    }
  }

  return {
    poll() {
      running ??= drain().finally(() => (running = undefined));
      return running;
    },
    async stop(o = {}) {
      if (running) await settleWithin(running, o.timeout ?? 10_000);
      transport.close();
    },
  };
}
