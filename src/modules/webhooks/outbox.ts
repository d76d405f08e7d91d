/**
 * The delivery outbox (CONTRACT 6, 7): fan-out of an event into one
 * `deliveries` row per subscribed, active, live webhook; the claim and the
 * outcome statements the worker runs. Claim → commit → send → record: no
 * transaction or row lock is ever held across a network call (STYLE 6).
 */
import { sql as dsql } from "drizzle-orm";
import type postgres from "postgres";
import type { DbOrTx } from "../../db/client.ts";
import { deliveries } from "../../db/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { PLANS } from "../billing/plans.ts";
import type { EventType } from "../tracking/states.ts";
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
  await tx.insert(deliveries).values(
    targets.map((w) => ({
      id: newId("dlv"),
      webhookId: w.id,
      accountId: w.account_id,
      eventId: ev.eventId,
      shipmentId: ev.shipmentId,
      eventType: ev.type,
      mode: "live",
      state: "pending",
      attempts: 0,
      nextAttemptAt: ev.enqueuedAt,
      enqueuedAt: ev.enqueuedAt,
      createdAt: ev.enqueuedAt,
      updatedAt: ev.enqueuedAt,
    })),
  );
  await tx.execute(dsql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
  return targets.length;
}

/** A claimed delivery with everything the attempt needs, read in the claim statement. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  account_id: string;
  event_type: EventType;
  mode: "live" | "test";
  attempts: number;
  /** Timestamp text as PostgreSQL prints it. */
  enqueued_at: string;
  synthetic_data: PayloadData | null;
  /** The lease this claim holds, as text (compared back verbatim when recording). */
  lease_until: string;
  url: string;
  webhook_mode: string;
  webhook_status: string;
  webhook_events: string[];
  plan: string;
  secret_enc: string | null;
  shipment: ShipmentRow | null;
}

/**
 * Claims up to `limit` due deliveries for `leaseMs` (one statement).
 *
 * Why this shape: the inner select takes row locks with SKIP LOCKED, so
 * concurrent workers (any number of processes) partition the due rows
 * instead of queueing on each other; the outer update stamps the lease in
 * the same statement, so the lock is released at the (auto)commit right
 * after. A row whose lease has run out (its worker died mid-send, kill -9)
 * matches `lease_until < now` again: that predicate is the stale-lease
 * reset, and makes delivery at-least-once. The secret, the webhook and the
 * freshest shipment record are read here too, in the claim's snapshot: a
 * rotation committed before the claim is always seen.
 * Only final states null `next_attempt_at`, so the due index holds pending rows only.
 */
export async function claimDue(sql: postgres.Sql, now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  // Timestamps travel as ISO text: drizzle switches postgres-js's Date (de)serialisers off on this client.
  const nowD = new Date(now).toISOString();
  const lease = new Date(now + leaseMs).toISOString();
  return (await sql`
    update deliveries d
    set lease_until = ${lease}, updated_at = ${nowD}
    from (
      select id from deliveries
      where state = 'pending' and next_attempt_at <= ${nowD} and (lease_until is null or lease_until < ${nowD})
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    ) due, webhooks w, accounts a
    where d.id = due.id and w.id = d.webhook_id and a.id = d.account_id
    returning d.id, d.webhook_id, d.account_id, d.event_type, d.mode, d.attempts, d.enqueued_at, d.synthetic_data, d.lease_until,
      w.url, w.mode as webhook_mode, w.status as webhook_status, w.events as webhook_events, a.plan, a.webhook_secret_enc as secret_enc,
      (select jsonb_build_object(
         'tracking_number', s.tracking_number, 'courier', s.courier, 'state', s.state,
         'most_recent_status', s.most_recent_status, 'origin_city', s.origin_city,
         'destination_city', s.destination_city, 'delivered_at', s.delivered_at, 'checkpoints', s.checkpoints)
       from shipments s where s.id = d.shipment_id) as shipment
  `) as unknown as ClaimedDelivery[];
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

const clean = (s: string | null) => (s === null ? null : s.replaceAll("\u0000", ""));

/**
 * Records an attempt's outcome in one statement: the delivery row (only if
 * our lease still holds — a worker that outlived its lease must not overwrite
 * the new owner's result), every hop in the attempt log, and the live
 * webhook's consecutive-failure count (spec: Live webhook lifecycle: +1 on
 * abandoned or dropped, reset on delivered, `deactivated` at 20).
 * Returns false when the lease was lost (nothing written).
 */
export async function recordOutcome(sql: postgres.Sql, d: Pick<ClaimedDelivery, "id" | "lease_until">, o: Outcome, now: number): Promise<{ recorded: boolean; webhookStatus: string | null }> {
  const nowD = new Date(now).toISOString();
  const counts = o.state === "delivered" || o.state === "abandoned" || o.state === "dropped";
  const hops = o.hops.map((h) => ({ id: newId("att"), url: h.url, started_at: h.startedAt, duration_ms: h.durationMs, status_code: h.statusCode, error: h.error, snippet: clean(h.snippet) }));
  const [r] = await sql`
    with d as (
      update deliveries
      set state = ${o.state}, attempts = ${o.attempts}, next_attempt_at = ${o.nextAttemptAt?.toISOString() ?? null}, lease_until = null,
          last_status_code = ${o.statusCode}, last_error = ${o.error}, updated_at = ${nowD}
      where id = ${d.id} and lease_until = ${d.lease_until} and state = 'pending'
      returning id, webhook_id, mode
    ), hops as (
      insert into delivery_attempts (id, delivery_id, webhook_id, attempt, url, started_at, duration_ms, status_code, error, response_snippet)
      select h.id, d.id, d.webhook_id, ${o.attempts}, h.url, to_timestamp(h.started_at / 1000.0), h.duration_ms, h.status_code, h.error, h.snippet
      from d, jsonb_to_recordset(${JSON.stringify(hops)}::jsonb)
        as h(id text, url text, started_at bigint, duration_ms int, status_code int, error text, snippet text)
      returning 1
    ), w as (
      update webhooks
      set failure_count = case when ${o.state} = 'delivered' then 0 else failure_count + 1 end,
          status = case when ${o.state} <> 'delivered' and failure_count + 1 >= 20 then 'deactivated' else status end,
          updated_at = ${nowD}
      from d
      where ${counts} and webhooks.id = d.webhook_id and d.mode = 'live' and webhooks.mode = 'live'
        and (${o.state} <> 'delivered' or webhooks.failure_count <> 0)
      returning webhooks.status
    )
    select (select count(*) from d)::int as recorded, (select count(*) from hops)::int as hops, (select status from w limit 1) as webhook_status
  `;
  return { recorded: (r?.recorded ?? 0) > 0, webhookStatus: (r?.webhook_status as string | null) ?? null };
}
