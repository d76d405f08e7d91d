/** The delivery outbox (spec: Events; spec-map Decisions: Outbox): the fan-out of events and the outcome statement. */
import { sql as dsql } from "drizzle-orm";
import type postgres from "postgres";
import type { DbOrTx } from "../../../db/client.ts";
import { newId } from "../../../lib/ids.ts";
import { inSpan } from "../../../lib/tracing.ts";
import { PLANS } from "../../../domain/plans.ts";
import { DEACTIVATE_AFTER_FAILURES, failureEffect } from "../../../domain/delivery.ts";
import type { EventSink } from "../../../core-deps.ts";
import type { EventType, WebhookEventType } from "../../../domain/events.ts";
import type { CourierEventType } from "../../../domain/courier-health.ts";
import type { Hop } from "./http.ts";
import type { CourierEventData } from "./payload.ts";
import { deactivationCte } from "../../alerts/record.ts";
import { DELIVERIES_CHANNEL, type ClaimedDelivery } from "./claim.ts";

export { claimDue, releaseLeases, DELIVERIES_CHANNEL, type ClaimedDelivery } from "./claim.ts";

const LIVE_PLANS = PLANS.filter((p) => p.live_webhooks).map((p) => p.id);

/** Writes the event's outbox rows in the caller's transaction (NOTIFY at commit); returns how many. */
export async function fanOutEvent(
  tx: DbOrTx,
  ev: { eventId: string; shipmentId: string; type: EventType; enqueuedAt: Date; accountId?: string },
): Promise<number> {
  const targets = (await tx.execute(dsql`
    select w.id, w.account_id
    from follows f
    join webhooks w on w.account_id = f.account_id
    join accounts a on a.id = w.account_id
    where f.shipment_id = ${ev.shipmentId}
      and w.mode = 'live' and w.status = 'active'
      and ${ev.type} = any(w.events)
      ${ev.accountId ? dsql`and f.account_id = ${ev.accountId}` : dsql``}
      and a.plan in (${dsql.join(
        LIVE_PLANS.map((p) => dsql`${p}`),
        dsql`, `,
      )})
  `)) as unknown as { id: string; account_id: string }[];
  return insertOutbox(tx, targets, ev, null);
}

/**
 * Writes a courier health event's outbox rows (docs/courier-health.md, "Events"): every live, active webhook on a
 * live plan that lists `type`, whoever follows what; `data` is stored with the row and sent as is. Returns how many.
 */
export async function fanOutCourierEvent(
  tx: DbOrTx,
  ev: { eventId: string; type: CourierEventType; enqueuedAt: Date; data: CourierEventData },
): Promise<number> {
  const targets = (await tx.execute(dsql`
    select w.id, w.account_id from webhooks w join accounts a on a.id = w.account_id
    where w.mode = 'live' and w.status = 'active' and ${ev.type} = any(w.events)
      and a.plan in (${dsql.join(
        LIVE_PLANS.map((p) => dsql`${p}`),
        dsql`, `,
      )})
  `)) as unknown as { id: string; account_id: string }[];
  return insertOutbox(tx, targets, { ...ev, shipmentId: null }, ev.data);
}

async function insertOutbox(
  tx: DbOrTx,
  targets: { id: string; account_id: string }[],
  ev: { eventId: string; shipmentId: string | null; type: WebhookEventType; enqueuedAt: Date },
  data: CourierEventData | null,
): Promise<number> {
  if (targets.length === 0) return 0;
  const at = ev.enqueuedAt.toISOString();
  const sorted = targets.toSorted((x, y) => (x.id < y.id ? -1 : 1)); // counters locked in one order: fan-outs queue, never deadlock
  const rows = JSON.stringify(
    sorted.map((w, ord) => ({ id: newId("dlv"), webhook_id: w.id, account_id: w.account_id, ord })),
  );
  const synthetic = data === null ? null : JSON.stringify(data);
  // One round trip: sequences (locked until commit: no gaps), outbox rows (queued by trigger), wake-up.
  await tx.execute(dsql`
    with v as (
      select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, webhook_id text, account_id text, ord int)
    ), s as (
      insert into webhook_sequences as ws (webhook_id, last_sequence) select v.webhook_id, 1 from v order by v.ord
      on conflict (webhook_id) do update set last_sequence = ws.last_sequence + 1 returning ws.webhook_id, ws.last_sequence
    ), d as (
      insert into deliveries (id, webhook_id, account_id, sequence, event_id, shipment_id, event_type, mode, state, attempts,
        next_attempt_at, enqueued_at, synthetic_data, created_at, updated_at)
      select v.id, v.webhook_id, v.account_id, s.last_sequence, ${ev.eventId}, ${ev.shipmentId}, ${ev.type}, 'live', 'pending', 0,
        ${at}::timestamptz, ${at}::timestamptz, ${synthetic}::jsonb, ${at}::timestamptz, ${at}::timestamptz
      from v join s on s.webhook_id = v.webhook_id
      returning id
    )
    select pg_notify(${DELIVERIES_CHANNEL}, '')
  `);
  return targets.length;
}

/** The webhooks module's event sink (`AppDeps.onEvents`): {@link fanOutEvent} per event; returns the rows written. */
export const outboxEventSink: EventSink = (tx, events) =>
  inSpan("outbox enqueue", { "db.system.name": "postgresql" }, async () => {
    let rows = 0;
    for (const ev of events) rows += await fanOutEvent(tx, ev);
    return rows;
  });

type FinalState = "pending" | "delivered" | "abandoned" | "dropped" | "skipped";

export interface Outcome {
  state: FinalState;
  /** Attempt number just made (1..6); unchanged for `skipped`. */
  attempts: number;
  nextAttemptAt: Date | null;
  statusCode: number | null;
  error: string | null;
  hops: Hop[];
}

// PostgreSQL text cannot hold NUL. The check first: replaceAll cost ~3 µs a snippet in bench:deliver even with none.
const clean = (s: string | null) => (s === null || !s.includes("\u0000") ? s : s.replaceAll("\u0000", ""));

export interface OutcomeItem {
  delivery: Pick<ClaimedDelivery, "id" | "created_at" | "lease_until" | "webhook_id" | "mode">;
  outcome: Outcome;
}

function outcomeParams(items: OutcomeItem[]) {
  const rows = items.map(({ delivery: d, outcome: o }, ord) => ({
    id: d.id,
    created_at: d.created_at,
    ord,
    lease: d.lease_until,
    state: o.state,
    attempts: o.attempts,
    next_at: o.nextAttemptAt?.toISOString() ?? null,
    status_code: o.statusCode,
    error: o.error,
    effect: failureEffect(d.mode, o.state),
  }));
  const hops = items.flatMap(({ delivery: d, outcome: o }) =>
    o.hops.map((h) => ({
      id: newId("att"),
      delivery_id: d.id,
      attempt: o.attempts,
      url: h.url,
      started_at: h.startedAt,
      duration_ms: h.durationMs,
      status_code: h.statusCode,
      error: h.error,
      snippet: clean(h.snippet),
    })),
  );
  return { rows, hops };
}

/**
 * Records a batch of outcomes in one statement (docs/webhooks.md, "The worker": Record statement; policy from
 * src/domain/delivery.ts). Returns the ids recorded and the webhooks deactivated. @throws on DB errors.
 */
export async function recordOutcomes(
  sql: postgres.Sql,
  items: OutcomeItem[],
  now: number,
): Promise<{ recorded: Set<string>; deactivated: string[] }> {
  if (items.length === 0) return { recorded: new Set(), deactivated: [] };
  const nowD = new Date(now).toISOString();
  const { rows, hops } = outcomeParams(items);
  const out = (await sql`
    with v as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as v(id text, created_at timestamptz, ord int, lease text, state text, attempts int, next_at text, status_code int, error text, effect text)
    ), d as (
      -- No equality a hash join could use: a nested loop, one partition per outcome (sameKey, src/jobs/queue.ts).
      update deliveries
      set state = v.state, attempts = v.attempts, next_attempt_at = v.next_at::timestamptz, lease_until = null,
          last_status_code = v.status_code, last_error = v.error, updated_at = ${nowD}
      from v
      where deliveries.id >= v.id and deliveries.id <= v.id and deliveries.created_at >= v.created_at
        and deliveries.created_at <= v.created_at and deliveries.lease_until is not distinct from v.lease::timestamptz
        and deliveries.state = 'pending'
      returning deliveries.id, deliveries.webhook_id, deliveries.state, deliveries.next_attempt_at, v.ord, v.effect
    ), gone as (
      delete from delivery_queue q using d where q.delivery_id = d.id and d.state <> 'pending'
    ), retry as (
      update delivery_queue q set due_at = d.next_attempt_at from d where q.delivery_id = d.id and d.state = 'pending'
    ), hops as (
      insert into delivery_attempts (id, delivery_id, webhook_id, attempt, url, started_at, duration_ms, status_code, error, response_snippet)
      select h.id, d.id, d.webhook_id, h.attempt, h.url, to_timestamp(h.started_at / 1000.0), h.duration_ms, h.status_code, h.error, h.snippet
      from jsonb_to_recordset(${JSON.stringify(hops)}::jsonb)
        as h(id text, delivery_id text, attempt int, url text, started_at bigint, duration_ms int, status_code int, error text, snippet text)
      join d on d.id = h.delivery_id
      returning 1
    ), counted as (
      select webhook_id, ord, effect = 'reset' as ok from d where effect is not null
    ), fold as (
      select c.webhook_id, l.last_ok is not null as reset, (count(*) filter (where not c.ok and c.ord > coalesce(l.last_ok, -1)))::int as add
      from counted c
      join (select webhook_id, max(ord) filter (where ok) as last_ok from counted group by webhook_id) l on l.webhook_id = c.webhook_id
      group by c.webhook_id, l.last_ok
    ), w as (
      update webhooks w
      set failure_count = (case when f.reset then 0 else w.failure_count end) + f.add,
          status = case when f.add > 0 and (case when f.reset then 0 else w.failure_count end) + f.add >= ${DEACTIVATE_AFTER_FAILURES} then 'deactivated' else w.status end,
          updated_at = ${nowD}
      from fold f
      where w.id = f.webhook_id and w.mode = 'live' and w.status = 'active' and (f.add > 0 or w.failure_count <> 0)
      returning w.id, w.status, w.account_id, w.url
    ), alerted as (${deactivationCte(sql, sql`select id, account_id, url from w where status = 'deactivated'`, nowD)})
    select v.id, false as deactivated from v where not exists (select from d where d.id = v.id)
    union all
    select w.id, true from w where w.status = 'deactivated'
  `) as unknown as { id: string; deactivated: boolean }[];
  const recorded = new Set<string>(rows.map((r) => r.id));
  const deactivated: string[] = [];
  for (const r of out) {
    if (r.deactivated) deactivated.push(r.id);
    else recorded.delete(r.id);
  }
  return { recorded, deactivated };
}
