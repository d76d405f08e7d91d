/**
 * The delivery outbox (spec: Events; spec-map Decisions: Outbox): fan-out of an event into one
 * `deliveries` row per subscribed, active, live webhook; the claim and the
 * outcome statements the worker runs. Claim → commit → send → record: no
 * transaction or row lock is ever held across a network call, so a slow receiver never holds a lock.
 */
import { sql as dsql } from "drizzle-orm";
import type postgres from "postgres";
import type { DbOrTx } from "../../../db/client.ts";
import { newId } from "../../../lib/ids.ts";
import { defineQueue, frag, run } from "../../../db/queue.ts";
import { PLANS } from "../../../domain/plans.ts";
import { DEACTIVATE_AFTER_FAILURES, failureEffect } from "../../../domain/delivery.ts";
import type { EventSink } from "../../../core-deps.ts";
import type { EventType } from "../../../domain/events.ts";
import type { Hop } from "./http.ts";
import type { PayloadData, ShipmentRow } from "./payload.ts";

/** The NOTIFY channel that wakes delivery workers. */
export const DELIVERIES_CHANNEL = "deliveries";

const LIVE_PLANS = PLANS.filter((p) => p.live_webhooks).map((p) => p.id);

/**
 * Writes one outbox row per webhook that must receive `ev`: live, active,
 * subscribed to `ev.type`, of an account that follows the shipment and whose
 * plan still includes live webhooks. Call it inside the transaction that
 * stores the new shipment record: the rows commit with it, and the
 * `pg_notify` (delivered by PostgreSQL at commit, never before) wakes the
 * workers. `ev.enqueuedAt` is the event's fixed `enqueued_at` and the first
 * attempt's due time. Returns the number of rows inserted.
 */
export async function fanOutEvent(tx: DbOrTx, ev: { eventId: string; shipmentId: string; type: EventType; enqueuedAt: Date }): Promise<number> {
  const targets = (await tx.execute(dsql`
    select w.id, w.account_id
    from follows f
    join webhooks w on w.account_id = f.account_id
    join accounts a on a.id = w.account_id
    where f.shipment_id = ${ev.shipmentId}
      and w.mode = 'live' and w.status = 'active'
      and ${ev.type} = any(w.events)
      and a.plan in (${dsql.join(LIVE_PLANS.map((p) => dsql`${p}`), dsql`, `)})
  `)) as unknown as { id: string; account_id: string }[];
  if (targets.length === 0) return 0;
  const at = ev.enqueuedAt.toISOString();
  const sorted = targets.toSorted((x, y) => (x.id < y.id ? -1 : 1)); // counters locked in one order: fan-outs queue, never deadlock
  const rows = JSON.stringify(sorted.map((w, ord) => ({ id: newId("dlv"), webhook_id: w.id, account_id: w.account_id, ord })));
  // One round trip: next sequences (counter rows locked until commit: no gaps), outbox rows (queued by trigger, 0005), wake-up.
  await tx.execute(dsql`
    with v as (
      select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, webhook_id text, account_id text, ord int)
    ), s as (
      insert into webhook_sequences as ws (webhook_id, last_sequence) select v.webhook_id, 1 from v order by v.ord
      on conflict (webhook_id) do update set last_sequence = ws.last_sequence + 1 returning ws.webhook_id, ws.last_sequence
    ), d as (
      insert into deliveries (id, webhook_id, account_id, sequence, event_id, shipment_id, event_type, mode, state, attempts,
        next_attempt_at, enqueued_at, created_at, updated_at)
      select v.id, v.webhook_id, v.account_id, s.last_sequence, ${ev.eventId}, ${ev.shipmentId}, ${ev.type}, 'live', 'pending', 0,
        ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      from v join s on s.webhook_id = v.webhook_id
      returning id
    )
    select pg_notify(${DELIVERIES_CHANNEL}, '')
  `);
  return targets.length;
}

/**
 * The webhooks module's event sink (`AppDeps.onEvents`): every event the following module writes is fanned out
 * into the outbox by {@link fanOutEvent}, in the transaction that writes the event. Returns the outbox rows written.
 */
export const outboxEventSink: EventSink = async (tx, events) => {
  let rows = 0;
  for (const ev of events) rows += await fanOutEvent(tx, ev);
  return rows;
};

/**
 * The outbox as a queue of the claim engine: the lease is on the `deliveries` row, proven by its own end (no
 * owner column), and the due time is in `delivery_queue` (the claim's candidates read it; the record moves it).
 */
export const deliveryLeases = defineQueue<never>("deliveries", {
  key: "id",
  token: "lease",
  due: null,
  live: "state = 'pending'",
  by: "key",
  channel: DELIVERIES_CHANNEL,
  returning: "q.id, q.webhook_id, q.account_id, q.event_id, q.event_type, q.mode, q.attempts, q.enqueued_at, q.synthetic_data, q.shipment_id, q.sequence",
});

/** A claimed delivery with everything the attempt needs, read in the claim statement. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  account_id: string;
  /** The event's id; null for a test fire (redelivered test deliveries). */
  event_id: string | null;
  event_type: EventType;
  mode: "live" | "test";
  attempts: number;
  /** Timestamp text as PostgreSQL prints it. */
  enqueued_at: string;
  sequence: number | null; // the event's number for this webhook; null for test fires
  synthetic_data: PayloadData | null;
  /** The lease this claim holds, as ISO text (compared back as a timestamp when recording). */
  lease_until: string;
  url: string;
  webhook_mode: string;
  webhook_status: string;
  webhook_events: string[];
  plan: string;
  secret_enc: string | null;
  headers_enc: string | null; // custom headers, encrypted (modules/webhooks/headers.ts)
  shipment: ShipmentRow | null;
}

/**
 * Claims up to `limit` due deliveries for `leaseMs` (one statement). Units:
 * `now` ms since the epoch, `leaseMs` ms.
 *
 * Due rows come oldest first through `delivery_queue`, locked with SKIP LOCKED so workers partition them; the
 * lease is stamped in the same statement (a HOT update) and a row whose lease ran out matches again, which makes
 * delivery at-least-once. The secret, webhook and freshest shipment record (with the delivery's own account's
 * `reference` and `metadata`) are read in the claim's snapshot. Why this shape: docs/webhooks.md, "The worker".
 */
export async function claimDue(sql: postgres.Sql, now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const nowD = new Date(now).toISOString();
  const a = { nowMs: now, limit, leaseMs, owner: "" };
  const lease = deliveryLeases.leaseToken(a);
  // `id = any(array(...))` (by: "key") keeps the update on primary-key probes whatever the planner thinks of the sizes.
  // (Inside the candidates, `q` is the queue row; the claim's own `q`, the outbox row, is hidden there.)
  const claimed = deliveryLeases.claimStatement({
    ...a,
    candidates: frag`
      select x.id
      from delivery_queue q
      join deliveries x on x.id = q.delivery_id
      where q.due_at <= ${nowD} and x.state = 'pending' and (x.lease_until is null or x.lease_until < ${nowD})
      order by q.due_at
      limit ${limit}
      for update of x skip locked`,
  });
  // Every row of a claim gets the same lease, so it is not read back (the record compares it as sent), and
  // the webhook's columns come once per webhook (the first of its rows): each column read back costs the
  // worker about a microsecond per row, and claims are usually many rows of a few webhooks (bench/deliver.ts).
  const rows = (await run(sql, frag`
    with d as (${claimed}), c as (
      select d.*, w.url, w.mode as webhook_mode, w.status as webhook_status, w.events as webhook_events, a.plan,
        a.webhook_secret_enc as secret_enc, w.headers_enc
      from d join webhooks w on w.id = d.webhook_id join accounts a on a.id = d.account_id
    )
    select c.id, c.webhook_id, c.account_id, c.event_id, c.event_type, c.mode, c.attempts, c.enqueued_at, c.synthetic_data, c.sequence::float8 as sequence,
      case when row_number() over (partition by c.webhook_id, c.account_id) = 1 then json_build_object(
        'url', c.url, 'webhook_mode', c.webhook_mode, 'webhook_status', c.webhook_status, 'webhook_events', c.webhook_events,
        'plan', c.plan, 'secret_enc', c.secret_enc, 'headers_enc', c.headers_enc) end as webhook,
      (select json_build_object(
         'tracking_number', s.tracking_number, 'courier', s.courier, 'state', s.state,
         'most_recent_status', s.most_recent_status, 'origin_city', s.origin_city,
         'destination_city', s.destination_city, 'delivered_at', s.delivered_at, 'estimated_delivery', s.estimated_delivery, 'checkpoints', s.checkpoints,
         'reference', f.reference, 'metadata', f.metadata)
       from shipments s left join follows f on f.shipment_id = s.id and f.account_id = c.account_id
       where s.id = c.shipment_id) as shipment
    from c
  `)) as unknown as (Omit<ClaimedDelivery, WebhookColumn | "lease_until"> & { webhook: Pick<ClaimedDelivery, WebhookColumn> | null })[];
  const webhooks = new Map<string, Pick<ClaimedDelivery, WebhookColumn>>();
  for (const r of rows) if (r.webhook) webhooks.set(`${r.webhook_id}|${r.account_id}`, r.webhook);
  return rows.map((r) => {
    const w = webhooks.get(`${r.webhook_id}|${r.account_id}`)!;
    return {
      id: r.id, webhook_id: r.webhook_id, account_id: r.account_id, event_id: r.event_id, event_type: r.event_type, mode: r.mode, attempts: r.attempts,
      enqueued_at: r.enqueued_at, sequence: r.sequence, synthetic_data: r.synthetic_data, lease_until: lease, url: w.url, webhook_mode: w.webhook_mode,
      webhook_status: w.webhook_status, webhook_events: w.webhook_events, plan: w.plan, secret_enc: w.secret_enc, headers_enc: w.headers_enc,
      shipment: r.shipment,
    };
  });
}

/** The claim's columns that are the webhook's and its account's (read once per webhook). */
type WebhookColumn = "url" | "webhook_mode" | "webhook_status" | "webhook_events" | "plan" | "secret_enc" | "headers_enc";

/**
 * Hands claimed rows back without an attempt (a stopping worker's rows that never got a slot): clears
 * each lease that is still ours, so the next claim by any worker takes the row at once instead of after
 * the lease runs out. Writes `lease_until` only (HOT, like the claim). Returns the rows released.
 */
export async function releaseLeases(sql: postgres.Sql, rows: Pick<ClaimedDelivery, "id" | "lease_until">[]): Promise<number> {
  const byLease = new Map<string, string[]>();
  for (const r of rows) byLease.set(r.lease_until, [...(byLease.get(r.lease_until) ?? []), r.id]);
  let released = 0;
  for (const [lease, ids] of byLease) released += await deliveryLeases.release(sql, ids, lease, 0);
  return released;
}

export type FinalState = "pending" | "delivered" | "abandoned" | "dropped" | "skipped";

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
  delivery: Pick<ClaimedDelivery, "id" | "lease_until" | "webhook_id" | "mode">;
  outcome: Outcome;
}

/**
 * Records a batch of attempt outcomes in one statement, so one autocommit (the worker batches whatever
 * finished while the previous batch was being written):
 *
 * 1. the delivery rows — only where our lease still holds (a worker that
 *    outlived its lease must not overwrite the new owner's result) — their
 *    queue entries (a final outcome leaves the queue, a retry is due again at
 *    its next attempt) and every hop in the attempt log.
 *    The outbox update writes no indexed column: HOT, no index entry;
 * 2. the live webhooks' consecutive-failure counts, applying the policy of src/domain/delivery.ts: each
 *    row's `failureEffect` (fail or reset) and the `deactivateAt` threshold come in as parameters; folded per webhook
 *    over the recorded rows in completion order (`ord`): a success resets,
 *    so the count grows by the failures after the webhook's last success in
 *    the batch. Only active webhooks count: an attempt that was in flight
 *    when its webhook was deactivated changes nothing there (the count stays
 *    where deactivation left it; reactivating resets it) and is not reported
 *    as deactivating it again.
 *
 * Batching matters: every attempt-log row takes a FOR KEY SHARE lock on its
 * webhook (foreign key); one transaction per delivery turns that into a
 * multixact storm on a busy webhook, and each commit is a WAL flush. One
 * statement instead of BEGIN, two statements and COMMIT saves three round
 * trips a batch. Returns the ids recorded and the webhooks this batch deactivated (the statement sends
 * back only the ids it did not record, usually none).
 */
export async function recordOutcomes(
  sql: postgres.Sql,
  items: OutcomeItem[],
  now: number,
  deactivateAt: number = DEACTIVATE_AFTER_FAILURES,
): Promise<{ recorded: Set<string>; deactivated: string[] }> {
  if (items.length === 0) return { recorded: new Set(), deactivated: [] };
  const nowD = new Date(now).toISOString();
  const rows = items.map(({ delivery: d, outcome: o }, ord) => ({
    id: d.id, ord, lease: d.lease_until, state: o.state, attempts: o.attempts, next_at: o.nextAttemptAt?.toISOString() ?? null, status_code: o.statusCode, error: o.error,
    effect: failureEffect(d.mode, o.state),
  }));
  const hops = items.flatMap(({ delivery: d, outcome: o }) =>
    o.hops.map((h) => ({ id: newId("att"), delivery_id: d.id, attempt: o.attempts, url: h.url, started_at: h.startedAt, duration_ms: h.durationMs, status_code: h.statusCode, error: h.error, snippet: clean(h.snippet) })),
  );
  const out = (await sql`
    with v as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as v(id text, ord int, lease text, state text, attempts int, next_at text, status_code int, error text, effect text)
    ), d as (
      update deliveries
      set state = v.state, attempts = v.attempts, next_attempt_at = v.next_at::timestamptz, lease_until = null,
          last_status_code = v.status_code, last_error = v.error, updated_at = ${nowD}
      from v
      where deliveries.id = v.id and deliveries.lease_until = v.lease::timestamptz and deliveries.state = 'pending'
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
          status = case when f.add > 0 and (case when f.reset then 0 else w.failure_count end) + f.add >= ${deactivateAt} then 'deactivated' else w.status end,
          updated_at = ${nowD}
      from fold f
      where w.id = f.webhook_id and w.mode = 'live' and w.status = 'active' and (f.add > 0 or w.failure_count <> 0)
      returning w.id, w.status
    )
    select v.id, false as deactivated from v where not exists (select from d where d.id = v.id)
    union all
    select w.id, true from w where w.status = 'deactivated'
  `) as unknown as { id: string; deactivated: boolean }[];
  // Only the rows NOT recorded (lease lost: rare) come back, not one row per outcome.
  const recorded = new Set<string>(rows.map((r) => r.id));
  const deactivated: string[] = [];
  for (const r of out) {
    if (r.deactivated) deactivated.push(r.id);
    else recorded.delete(r.id);
  }
  return { recorded, deactivated };
}
