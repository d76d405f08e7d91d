/** The outbox as a queue of the claim engine: a claim that reads what an attempt needs, and the release of unsent rows. */
import type postgres from "postgres";
import { defined } from "../../../lib/defined.ts";
import { type Fragment, frag, run } from "../../../jobs/fragment.ts";
import { defineQueue, sameKey } from "../../../jobs/queue.ts";
import type { EventType, WebhookEventType } from "../../../domain/events.ts";
import { pastSpan, tracingOn } from "../../../lib/tracing.ts";
import { decodeHistory } from "../../following/history.ts";
import type { CourierEventData, PayloadData, ShipmentRow } from "./payload.ts";

export const DELIVERIES_CHANNEL = "deliveries";

/**
 * The lease is on the `deliveries` row, proven by its own end; the due time is in `delivery_queue`. Rows are found
 * by (id, created_at), the partition key (docs/webhooks.md, "The worker").
 */
const deliveryLeases = defineQueue<never>("deliveries", {
  key: "id",
  token: "lease",
  due: null,
  live: "state = 'pending'",
  by: "key",
  partition: { column: "created_at", type: "timestamptz" },
  channel: DELIVERIES_CHANNEL,
  returning:
    "q.id, q.created_at, q.webhook_id, q.account_id, q.event_id, q.event_type, q.mode, q.attempts, q.enqueued_at, q.synthetic_data, q.shipment_id, q.sequence",
});

export interface ClaimedDelivery {
  id: string;
  /** The row's partition key (timestamptz as PostgreSQL prints it): every statement after the claim carries it. */
  created_at: string;
  webhook_id: string;
  account_id: string;
  /** Null for a test fire. */
  event_id: string | null;
  /** The event's W3C traceparent; read only when tracing is on. */
  trace_parent: string | null;
  event_type: WebhookEventType;
  mode: "live" | "test";
  attempts: number;
  enqueued_at: string;
  /** The event's number for this webhook; null for test fires. */
  sequence: number | null;
  /** A test fire's sample, or a courier event's data (docs/courier-health.md). */
  synthetic_data: PayloadData | CourierEventData | null;
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
  const lease = deliveryLeases.leaseToken({ nowMs: now, leaseMs, owner: "" });
  const traced = tracingOn();
  const claimStarted = Date.now();
  // A generic plan: a custom one is planned anew on every call over every partition (docs/performance.md, "The
  // delivery claim's plan is generic"), and its values come from the queue row at run time anyway.
  const [, claimed] = await sql.begin((tx) => [
    tx`set local plan_cache_mode = force_generic_plan`,
    run(tx as unknown as postgres.Sql, claimStatement(now, limit, leaseMs, traced)),
  ]);
  const rows = claimed as unknown as ClaimRow[];
  if (traced && rows.length > 0)
    pastSpan(
      "outbox claim",
      claimStarted,
      { "db.system.name": "postgresql", "outbox.rows": rows.length },
      rows.map((r) => r.trace_parent),
    );
  return toClaimed(rows, lease);
}

/** The statement {@link claimDue} runs (exported so that its plan can be examined); arguments as there. */
export function claimStatement(now: number, limit: number, leaseMs: number, traced: boolean): Fragment {
  const nowD = new Date(now).toISOString();
  const a = { nowMs: now, limit, leaseMs, owner: "" };
  // Inside the candidates `q` is the queue row, hiding the claim's own `q` (the outbox row). One LATERAL probe per
  // queue row in due order, LIMIT 1: always a nested loop whose (id, created_at) prunes to one partition, whatever
  // the statistics say; it locks only the rows the claim returns.
  const claimed = deliveryLeases.claimStatement({
    ...a,
    candidates: frag`
      select x.id, x.created_at
      from delivery_queue q
      cross join lateral (
        select x.id, x.created_at from deliveries x
        where x.id = q.delivery_id and ${sameKey("x.created_at", "q.created_at")}
          and x.state = 'pending' and (x.lease_until is null or x.lease_until < ${nowD})
        limit 1
        for update skip locked
      ) x
      where q.due_at <= ${nowD}
      order by q.due_at
      limit ${limit}`,
  });
  // The lease and repeated webhook columns are not read back: each column costs about 1 µs a row (bench/deliver.ts).
  // The shipment is read once per shipment in the batch, its history as stored: the worker decodes it (decodeHistory;
  // decoding it here cost ~20 µs a checkpoint, docs/performance.md, "History read encoded"). The follow, the
  // event's ETA change and NDR action are the delivery's own. The event is read for those two types only: its id
  // alone cannot prune the events partitions.
  return frag`
    with d as (${claimed}), c as (
      select d.*, w.url, w.mode as webhook_mode, w.status as webhook_status, w.events as webhook_events, a.plan,
        a.webhook_secret_enc as secret_enc, w.headers_enc, a.public_link_key_enc
      from d join webhooks w on w.id = d.webhook_id join accounts a on a.id = d.account_id
    )
    select c.id, c.created_at, c.webhook_id, c.account_id, c.event_id, ${traced ? frag`(select e.trace_parent from events e where e.id = c.event_id) as trace_parent,` : frag``} c.event_type, c.mode, c.attempts, c.enqueued_at, c.synthetic_data, c.shipment_id, c.sequence::float8 as sequence,
      case when row_number() over (partition by c.webhook_id, c.account_id) = 1 then json_build_object(
        'url', c.url, 'webhook_mode', c.webhook_mode, 'webhook_status', c.webhook_status, 'webhook_events', c.webhook_events,
        'plan', c.plan, 'secret_enc', c.secret_enc, 'headers_enc', c.headers_enc) end as webhook,
      case when row_number() over (partition by c.shipment_id) = 1 then (select json_build_object(
         'tracking_number', s.tracking_number, 'courier', s.courier, 'state', s.state,
         'most_recent_status', s.most_recent_status, 'origin_city', s.origin_city,
         'destination_city', s.destination_city, 'delivered_at', s.delivered_at, 'estimated_delivery', s.estimated_delivery,
         'stored_history', shipment_history_stored(s), 'stalled', s.stalled_at is not null, 'predicted_delivery', s.predicted_delivery)
       from shipments s where s.id = c.shipment_id) end as shipment,
      (select json_build_object('reference', f.reference, 'metadata', f.metadata,
         'public_link', case when f.public_link_nonce is not null and coalesce(pb.public_links_enabled, true)
           then json_build_object('nonce', f.public_link_nonce, 'key_enc', c.public_link_key_enc) end)
       from follows f left join account_branding pb on pb.account_id = f.account_id
       where f.shipment_id = c.shipment_id and f.account_id = c.account_id) as follow,
      (select json_build_object('previous', e.eta_previous, 'current', e.eta_new) from events e
        where c.event_type = ${"tracking.eta_changed" satisfies EventType} and e.id = c.event_id and e.eta_new is not null) as eta_change,
      (select to_jsonb(a) - 'details_enc' from events e join shipment_actions a on a.id = e.action_id
        where c.event_type = ${"tracking.action_updated" satisfies EventType} and e.id = c.event_id) as action
    from c
  `;
}

/** A shipment as the claim reads it once per batch: the payload's columns, the history still encoded. */
type ClaimedShipment = Omit<ShipmentRow, "checkpoints" | FollowColumn | "eta_change" | "action"> & {
  stored_history: unknown[];
};
type FollowColumn = "reference" | "metadata" | "public_link";

type ClaimRow = Omit<ClaimedDelivery, WebhookColumn | "lease_until" | "shipment"> & {
  shipment_id: string | null;
  webhook: Pick<ClaimedDelivery, WebhookColumn> | null;
  shipment: ClaimedShipment | null;
  follow: Pick<ShipmentRow, FollowColumn> | null;
  eta_change: ShipmentRow["eta_change"];
  action: ShipmentRow["action"];
};

function toClaimed(rows: ClaimRow[], lease: string): ClaimedDelivery[] {
  const webhooks = new Map<string, Pick<ClaimedDelivery, WebhookColumn>>();
  const shipments = new Map<string, Omit<ShipmentRow, FollowColumn | "eta_change" | "action">>();
  for (const r of rows) {
    if (r.webhook) webhooks.set(`${r.webhook_id}|${r.account_id}`, r.webhook);
    if (r.shipment && r.shipment_id) {
      const { stored_history, ...columns } = r.shipment;
      shipments.set(r.shipment_id, { ...columns, checkpoints: decodeHistory(stored_history) });
    }
  }
  return rows.map((r) => {
    const w = defined(webhooks.get(`${r.webhook_id}|${r.account_id}`), "the claimed delivery's webhook");
    const s = r.shipment_id ? shipments.get(r.shipment_id) : undefined;
    return {
      id: r.id,
      created_at: r.created_at,
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
      // A follow ended since the event: the account's follow data is gone (null), the shipment still goes.
      shipment: s
        ? {
            ...s,
            reference: r.follow?.reference ?? null,
            metadata: r.follow?.metadata ?? null,
            public_link: r.follow?.public_link ?? null,
            eta_change: r.eta_change,
            action: r.action,
          }
        : null,
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
  rows: Pick<ClaimedDelivery, "id" | "created_at" | "lease_until">[],
): Promise<number> {
  const byLease = new Map<string, { ids: string[]; parts: string[] }>();
  for (const r of rows) {
    const keys = byLease.get(r.lease_until) ?? { ids: [], parts: [] };
    keys.ids.push(r.id);
    keys.parts.push(r.created_at);
    byLease.set(r.lease_until, keys);
  }
  let released = 0;
  for (const [lease, keys] of byLease) released += await deliveryLeases.release(sql, keys, lease, 0);
  return released;
}
