/**
 * `GET /v1/events`: the account's events of the last 30 days, newest first, each with the payload its next
 * delivery would carry (spec: Delivery rules 5; Why: docs/events.md#get-v1events).
 */
import type { CoreDeps } from "../../core-deps.ts";
import { publicUrlOf } from "../following/public-links.ts";
import { normaliseTrackingNumber } from "../couriers/catalogue.ts";
import type { EventType } from "../../domain/events.ts";
import { dataFromShipment, isoSecond, type ShipmentRow } from "../webhooks/delivery/payload.ts";
import { dateTimeMs } from "../../http/text.ts";

/** How far back the list reaches (ms): 30 days. */
const EVENTS_WINDOW_MS = 30 * 86_400_000;

export interface EventsFilter {
  type?: EventType;
  courier?: string;
  tracking_number?: string;
  since?: string;
  limit?: number;
  cursor?: string;
}

interface Row {
  id: string;
  type: EventType;
  enqueued_at: string;
  shipment: ShipmentRow;
}

/** One page of events; `since` clamped to the window, `cursor` the previous page's last id (ids sort by time). */
export async function listEvents(
  deps: Pick<CoreDeps, "db" | "secretsKey" | "config">,
  accountId: string,
  nowMs: number,
  f: EventsFilter,
) {
  const sql = deps.db.$client;
  const limit = f.limit ?? 20;
  const floor = nowMs - EVENTS_WINDOW_MS;
  const since = Math.max(floor, f.since ? (dateTimeMs(f.since) ?? floor) : floor);
  const cursor = f.cursor && /^evt_[0-9a-f]{32}$/.test(f.cursor) ? f.cursor : undefined;
  if (f.cursor && !cursor) return { events: [], count: 0, next_cursor: null };
  const rows = (await sql`
    select e.id, e.type, to_json(e.enqueued_at)#>>'{}' as enqueued_at,
      jsonb_build_object('tracking_number', s.tracking_number, 'courier', s.courier, 'state', s.state,
        'most_recent_status', s.most_recent_status, 'origin_city', s.origin_city, 'destination_city', s.destination_city,
        'delivered_at', s.delivered_at, 'estimated_delivery', s.estimated_delivery, 'checkpoints', shipment_history(s),
        'reference', fa.reference, 'metadata', fa.metadata, 'stalled', s.stalled_at is not null, 'predicted_delivery', s.predicted_delivery,
        'eta_change', case when e.eta_new is not null then jsonb_build_object('previous', e.eta_previous, 'current', e.eta_new) end,
        'public_link', case when fa.public_link_nonce is not null and coalesce(pb.public_links_enabled, true)
          then jsonb_build_object('nonce', fa.public_link_nonce, 'key_enc', pa.public_link_key_enc) end,
        'action', (select to_jsonb(a) - 'details_enc' from shipment_actions a where a.id = e.action_id)) as shipment
    from events e join shipments s on s.id = e.shipment_id
      left join follows fa on fa.shipment_id = s.id and fa.account_id = ${accountId}
      left join accounts pa on pa.id = fa.account_id left join account_branding pb on pb.account_id = fa.account_id
    where e.enqueued_at >= ${new Date(since).toISOString()}
      and (exists (select 1 from follows fo where fo.account_id = ${accountId} and fo.shipment_id = e.shipment_id)
        or exists (select 1 from deliveries d where d.event_id = e.id and d.account_id = ${accountId}))
      and (e.action_id is null or exists (select 1 from shipment_actions a where a.id = e.action_id and a.account_id = ${accountId}))
      ${f.type ? sql`and e.type = ${f.type}` : sql``}
      ${f.courier ? sql`and s.courier = ${f.courier.trim().toLowerCase()}` : sql``}
      ${f.tracking_number ? sql`and s.tracking_number = ${normaliseTrackingNumber(f.tracking_number)}` : sql``}
      ${cursor ? sql`and e.id < ${cursor}` : sql``}
    order by e.id desc
    limit ${limit + 1}
  `) as unknown as Row[];
  const page = rows.slice(0, limit);
  const events = page.map((r) => {
    const enq = isoSecond(r.enqueued_at);
    return {
      id: r.id,
      type: r.type,
      created_at: enq,
      courier: r.shipment.courier,
      tracking_number: r.shipment.tracking_number,
      payload: {
        event: r.type,
        enqueued_at: enq,
        data: dataFromShipment(
          { ...r.shipment, public_url: publicUrlOf(deps, accountId, r.shipment.public_link) },
          enq,
        ),
      },
    };
  });
  return { events, count: events.length, next_cursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}
