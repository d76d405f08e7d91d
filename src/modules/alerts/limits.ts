/** The per-account, per-kind email limit and its digests (docs/alerts.md#limits-and-digests). Times: the caller's clock. */
import type postgres from "postgres";
import { defined } from "../../lib/defined.ts";
import { ALERT_WINDOW_MS, ALERTS_PER_WINDOW, type AlertKind } from "./model.ts";

export interface Slot {
  /** True: this alert may be emailed on its own. */
  ok: boolean;
  windowStart: string;
  windowEnd: string;
}

/**
 * Counts one email of `kind` for `accountId` in its window (a new window of {@link ALERT_WINDOW_MS} starts with the
 * first email after the last one ended; `nowMs` ms since the epoch), in one atomic upsert, so concurrent senders never both take the last slot.
 */
export async function takeSlot(sql: postgres.Sql, accountId: string, kind: AlertKind, nowMs: number): Promise<Slot> {
  const now = new Date(nowMs).toISOString();
  const [row] = await sql<{ sent: number; start: string; end: string }[]>`
    insert into alert_windows as w (account_id, kind, started_at, sent) values (${accountId}, ${kind}, ${now}::timestamptz, 1)
    on conflict (account_id, kind) do update set
      started_at = case when w.started_at + ${ALERT_WINDOW_MS} * interval '1 millisecond' <= ${now}::timestamptz then ${now}::timestamptz else w.started_at end,
      sent = case when w.started_at + ${ALERT_WINDOW_MS} * interval '1 millisecond' <= ${now}::timestamptz then 1 else w.sent + 1 end
    returning sent, started_at::text as start, (started_at + ${ALERT_WINDOW_MS} * interval '1 millisecond')::text as end`;
  const r = defined(row, "the alert window's row");
  return { ok: r.sent <= ALERTS_PER_WINDOW, windowStart: r.start, windowEnd: r.end };
}

/**
 * Folds a claimed alert into its window's digest (queued for the window's end; created by the first fold), while the
 * claim's lease holds. `busy`: the digest is being sent or was sent, so the caller emails the alert on its own;
 * `lost`: the lease was lost (another worker has the alert).
 */
export async function foldAlert(
  sql: postgres.Sql,
  a: { id: number; account_id: string; kind: AlertKind; lease_until: string },
  slot: Slot,
): Promise<"folded" | "busy" | "lost"> {
  const [row] = await sql<{ digest: number; folded: number }[]>`
    with d as (
      insert into alerts (account_id, kind, dedupe_key, details, state, next_attempt_at)
      values (${a.account_id}, 'digest', ${`${a.kind}@${slot.windowStart}`},
        ${JSON.stringify({ kind: a.kind, from: slot.windowStart, until: slot.windowEnd })}::jsonb, 'queued', ${slot.windowEnd})
      on conflict (account_id, kind, dedupe_key) do update set details = alerts.details
        where alerts.state = 'queued' and alerts.lease_until is null
      returning id
    ), f as (
      update alerts set state = 'folded', digest_id = d.id, lease_until = null
      from d where alerts.id = ${a.id} and alerts.lease_until = ${a.lease_until}
      returning alerts.id
    )
    select (select count(*) from d)::int as digest, (select count(*) from f)::int as folded`;
  const r = defined(row, "the fold's counts");
  return r.folded > 0 ? "folded" : r.digest > 0 ? "lost" : "busy";
}

export interface FoldedAlert {
  kind: AlertKind;
  details: Record<string, unknown>;
  created_at: string;
}

/** The alerts folded into digest `digestId`, oldest first. */
export async function foldedInto(sql: postgres.Sql, digestId: number): Promise<FoldedAlert[]> {
  return (await sql`select kind, details, created_at from alerts where digest_id = ${digestId} order by id`) as unknown as FoldedAlert[];
}
