/**
 * Writers of the alerts outbox (docs/alerts.md). Each alert is inserted in the transaction of its cause, with a
 * dedupe key that makes a second insert of the same alert a no-op (`on conflict do nothing`): a re-run cause never
 * queues a second email. The worker (sender.ts) sends what is pending.
 */
import type postgres from "postgres";
import type { DbOrTx } from "../../db/client.ts";
import { alerts } from "../../db/schema/index.ts";
import { crossedMarks, type AlertKind } from "./model.ts";

export interface NewAlert {
  accountId: string;
  kind: AlertKind;
  dedupeKey: string;
  details?: Record<string, unknown>;
}

/** Queues one alert through drizzle (`db` or the cause's transaction); false (nothing queued) when it already was. */
export async function recordAlert(db: DbOrTx, a: NewAlert): Promise<boolean> {
  const rows = await db
    .insert(alerts)
    .values({ accountId: a.accountId, kind: a.kind, dedupeKey: a.dedupeKey, details: a.details ?? {} })
    .onConflictDoNothing()
    .returning({ id: alerts.id });
  return rows.length > 0;
}

/**
 * Queues the quota alerts a count crossed from `before` to `after` units of `quota` in month `period` (`YYYY-MM`),
 * in the postgres-js transaction `tx` that counted them (a bulk follow); no statement when no mark was crossed.
 */
export async function recordQuotaMarks(tx: postgres.TransactionSql, accountId: string, period: string, before: number, after: number, quota: number): Promise<void> {
  for (const m of crossedMarks(before, after, quota))
    await tx`insert into alerts (account_id, kind, dedupe_key, details)
      values (${accountId}, ${`quota_${m}`}, ${period}, ${JSON.stringify({ period, quota, mark: m })}::jsonb) on conflict do nothing`;
}

/**
 * The quota alerts of a block grant, as a data-modifying CTE body for the grant statement (accounts/quota-lease.ts),
 * so the alert commits with the units: it reads the grant's CTE `g(before, after)` and queues `quota_80` / `quota_100`
 * for each mark the block crossed. The dedupe key is the month: units given back and granted again stay one alert.
 */
export function quotaMarksCte(sql: postgres.Sql, accountId: string, period: string, quota: number): postgres.PendingQuery<postgres.Row[]> {
  return sql`insert into alerts (account_id, kind, dedupe_key, details)
    select ${accountId}, 'quota_' || m.pct, ${period}, jsonb_build_object('period', ${period}::text, 'quota', ${quota}::int, 'mark', m.pct)
    from g, (values (80), (100)) as m(pct)
    where g.before * 100 < ${quota}::int * m.pct and g.after * 100 >= ${quota}::int * m.pct
    on conflict do nothing`;
}

/**
 * The deactivation alerts of an outcome batch, as a data-modifying CTE body for the recording statement
 * (webhooks/delivery/outbox.ts): it reads that statement's CTE `w(id, status, account_id, url)` of updated webhooks.
 * `at` (ISO instant of the batch) is in the dedupe key: a webhook reactivated and deactivated again alerts again.
 */
export function deactivationCte(sql: postgres.Sql, at: string): postgres.PendingQuery<postgres.Row[]> {
  return sql`insert into alerts (account_id, kind, dedupe_key, details)
    select w.account_id, 'webhook_deactivated', w.id || '@' || ${at}::text, jsonb_build_object('webhook_id', w.id, 'url', w.url, 'at', ${at}::text)
    from w where w.status = 'deactivated'
    on conflict do nothing`;
}
