/** Writers of the alerts outbox (docs/alerts.md), in the cause's transaction; a dedupe key makes re-runs no-ops. */
import type postgres from "postgres";
import type { DbOrTx } from "../../db/client.ts";
import { alerts } from "../../db/schema/index.ts";
import { crossedMarks, QUOTA_MARKS, type AlertKind } from "./model.ts";

export interface NewAlert {
  accountId: string;
  kind: AlertKind;
  dedupeKey: string;
  details?: Record<string, unknown>;
  /** When its cause happened, ms since the epoch (the injected clock's): the alert is due then. */
  at: number;
}

/** Queues one alert through drizzle (`db` or the cause's transaction); false (nothing queued) when it already was. */
export async function recordAlert(db: DbOrTx, a: NewAlert): Promise<boolean> {
  const rows = await db
    .insert(alerts)
    .values({
      accountId: a.accountId,
      kind: a.kind,
      dedupeKey: a.dedupeKey,
      details: a.details ?? {},
      nextAttemptAt: new Date(a.at),
    })
    .onConflictDoNothing()
    .returning({ id: alerts.id });
  return rows.length > 0;
}

/** Queues the quota alerts crossed from `before` to `after` in month `period`, due at `nowMs`, in the counting transaction `tx`. */
export async function recordQuotaMarks(
  tx: postgres.TransactionSql,
  accountId: string,
  period: string,
  counts: { before: number; after: number; quota: number },
  nowMs: number,
): Promise<void> {
  const { before, after, quota } = counts;
  for (const m of crossedMarks(before, after, quota))
    await tx`insert into alerts (account_id, kind, dedupe_key, details, next_attempt_at)
      values (${accountId}, ${`quota_${m}`}, ${period}, ${JSON.stringify({ period, quota, mark: m })}::jsonb, ${new Date(nowMs).toISOString()})
      on conflict do nothing`;
}

/**
 * A CTE body for the block grant: queues each quota mark ({@link QUOTA_MARKS}, a parameter) crossed by the grant
 * that `grant` selects as its two columns (units used before, after), keyed by month, due at `nowMs`. Names inside are
 * this module's.
 */
export function quotaMarksCte(
  sql: postgres.Sql,
  grant: postgres.PendingQuery<postgres.Row[]>,
  accountId: string,
  period: string,
  quota: number,
  nowMs: number,
): postgres.PendingQuery<postgres.Row[]> {
  return sql`insert into alerts (account_id, kind, dedupe_key, details, next_attempt_at)
    select ${accountId}, 'quota_' || m.pct, ${period}, jsonb_build_object('period', ${period}::text, 'quota', ${quota}::int, 'mark', m.pct),
      ${new Date(nowMs).toISOString()}::timestamptz
    from (${grant}) as grant_(before, after), unnest(${[...QUOTA_MARKS]}::int[]) as m(pct)
    where grant_.before * 100 < ${quota}::int * m.pct and grant_.after * 100 >= ${quota}::int * m.pct
    on conflict do nothing`;
}

/**
 * A CTE body for the outcome statement: queues a `webhook_deactivated` alert for each webhook `deactivated` selects as
 * its three columns (webhook id, account id, url), due `at`; `at` in the key lets it alert again. Names inside are this
 * module's.
 */
export function deactivationCte(
  sql: postgres.Sql,
  deactivated: postgres.PendingQuery<postgres.Row[]>,
  at: string,
): postgres.PendingQuery<postgres.Row[]> {
  return sql`insert into alerts (account_id, kind, dedupe_key, details, next_attempt_at)
    select x.account_id, 'webhook_deactivated', x.webhook_id || '@' || ${at}::text, jsonb_build_object('webhook_id', x.webhook_id, 'url', x.url, 'at', ${at}::text),
      ${at}::timestamptz
    from (${deactivated}) as x(webhook_id, account_id, url)
    on conflict do nothing`;
}
