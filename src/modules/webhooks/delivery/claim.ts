/** The outbox as a queue of the claim engine: a claim that reads what an attempt needs, and the release of unsent rows. */
import type postgres from "postgres";
import { defineQueue, frag, run } from "../../../db/queue.ts";
import type { EventType } from "../../../domain/events.ts";
import { pastSpan, tracingOn } from "../../../lib/tracing.ts";
import type { PayloadData, ShipmentRow } from "./payload.ts";

export const DELIVERIES_CHANNEL = "deliveries";

/** The lease is on the `deliveries` row, proven by its own end; the due time is in `delivery_queue`. */
export const deliveryLeases = defineQueue<never>("deliveries", {
  key: "id",
  token: "lease",
  due: null,
  live: "state = 'pending'",
  by: "key",
  channel: DELIVERIES_CHANNEL,
  returning:
    "q.id, q.webhook_id, q.account_id, q.event_id, q.event_type, q.mode, q.attempts, q.enqueued_at, q.synthetic_data, q.shipment_id, q.sequence",
});

export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  account_id: string;
  /** Null for a test fire. */
  event_id: string | null;
  /** The event's W3C traceparent; read only when tracing is on. */
  trace_parent: string | null;
  event_type: EventType;
  mode: "live" | "test";
  attempts: number;
  enqueued_at: string;
  /** The event's number for this webhook; null for test fires. */
  sequence: number | null;
  synthetic_data: PayloadData | null;
  lease_until: string;
  url: string;
  webhook_mode: string;
  webhook_status: string;
  webhook_events: string[];
  plan: string;
  secret_enc: string | null;
  headers_enc: string | null;
  shipment: ShipmentRow | null;
}

/** Claims up to `limit` deliveries due at `now` (ms since the epoch) for `leaseMs` (ms), with webhook, secret and shipment. */
export async function claimDue(
  sql: postgres.Sql,
  now: number,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const nowD = new Date(now).toISOString();
  const a = { nowMs: now, limit, leaseMs, owner: "" };
  const lease = deliveryLeases.leaseToken(a);
  const traced = tracingOn();
  const claimStarted = Date.now();
  // Inside the candidates `q` is the queue row, hiding the claim's own `q` (the outbox row).
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
  // The lease and repeated webhook columns are not read back: each column costs about 1 µs a row (bench/deliver.ts).
  const rows = (await run(
    sql,
    frag`
    with d as (${claimed}), c as (
      select d.*, w.url, w.mode as webhook_mode, w.status as webhook_status, w.events as webhook_events, a.plan,
        a.webhook_secret_enc as secret_enc, w.headers_enc
      from d join webhooks w on w.id = d.webhook_id join accounts a on a.id = d.account_id
    )
    select c.id, c.webhook_id, c.account_id, c.event_id, ${traced ? frag`(select e.trace_parent from events e where e.id = c.event_id) as trace_parent,` : frag``} c.event_type, c.mode, c.attempts, c.enqueued_at, c.synthetic_data, c.sequence::float8 as sequence,
      case when row_number() over (partition by c.webhook_id, c.account_id) = 1 then json_build_object(
        'url', c.url, 'webhook_mode', c.webhook_mode, 'webhook_status', c.webhook_status, 'webhook_events', c.webhook_events,
        'plan', c.plan, 'secret_enc', c.secret_enc, 'headers_enc', c.headers_enc) end as webhook,
      (select json_build_object(
         'tracking_number', s.tracking_number, 'courier', s.courier, 'state', s.state,
         'most_recent_status', s.most_recent_status, 'origin_city', s.origin_city,
         'destination_city', s.destination_city, 'delivered_at', s.delivered_at, 'estimated_delivery', s.estimated_delivery, 'checkpoints', s.checkpoints,
         'reference', f.reference, 'metadata', f.metadata, 'stalled', s.stalled_at is not null, 'predicted_delivery', s.predicted_delivery,
         'eta_change', (select json_build_object('previous', e.eta_previous, 'current', e.eta_new) from events e where e.id = c.event_id and e.eta_new is not null))
       from shipments s left join follows f on f.shipment_id = s.id and f.account_id = c.account_id
       where s.id = c.shipment_id) as shipment
    from c
  `,
  )) as unknown as ClaimRow[];
  if (traced && rows.length > 0)
    pastSpan(
      "outbox claim",
      claimStarted,
      { "db.system.name": "postgresql", "outbox.rows": rows.length },
      rows.map((r) => r.trace_parent),
    );
  return toClaimed(rows, lease);
}

type ClaimRow = Omit<ClaimedDelivery, WebhookColumn | "lease_until"> & {
  webhook: Pick<ClaimedDelivery, WebhookColumn> | null;
};

function toClaimed(rows: ClaimRow[], lease: string): ClaimedDelivery[] {
  const webhooks = new Map<string, Pick<ClaimedDelivery, WebhookColumn>>();
  for (const r of rows) if (r.webhook) webhooks.set(`${r.webhook_id}|${r.account_id}`, r.webhook);
  return rows.map((r) => {
    const w = webhooks.get(`${r.webhook_id}|${r.account_id}`)!;
    return {
      id: r.id,
      webhook_id: r.webhook_id,
      account_id: r.account_id,
      event_id: r.event_id,
      trace_parent: r.trace_parent ?? null,
      event_type: r.event_type,
      mode: r.mode,
      attempts: r.attempts,
      enqueued_at: r.enqueued_at,
      sequence: r.sequence,
      synthetic_data: r.synthetic_data,
      lease_until: lease,
      url: w.url,
      webhook_mode: w.webhook_mode,
      webhook_status: w.webhook_status,
      webhook_events: w.webhook_events,
      plan: w.plan,
      secret_enc: w.secret_enc,
      headers_enc: w.headers_enc,
      shipment: r.shipment,
    };
  });
}

type WebhookColumn =
  | "url"
  | "webhook_mode"
  | "webhook_status"
  | "webhook_events"
  | "plan"
  | "secret_enc"
  | "headers_enc";

/** Clears the leases still ours on rows never attempted, so the next claim takes them at once; returns the count. */
export async function releaseLeases(
  sql: postgres.Sql,
  rows: Pick<ClaimedDelivery, "id" | "lease_until">[],
): Promise<number> {
  const byLease = new Map<string, string[]>();
  for (const r of rows) byLease.set(r.lease_until, [...(byLease.get(r.lease_until) ?? []), r.id]);
  let released = 0;
  for (const [lease, ids] of byLease) released += await deliveryLeases.release(sql, ids, lease, 0);
  return released;
}
