/** Redeliver and recover: NEW outbox rows, due now (docs/events.md#redeliver-and-recover-decisions-after-svix). */
import { sql as dsql } from "drizzle-orm";
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../lib/errors.ts";
import { isId, newId } from "../../lib/ids.ts";
import { DELIVERIES_CHANNEL, type ClaimedDelivery } from "./delivery/outbox.ts";
import { requireWebhook } from "./service.ts";

/** Recover looks back at most this far (ms): 30 days, the events' retention. */
export const RECOVER_WINDOW_MS = 30 * 86_400_000;

type Deps = Pick<AppDeps, "db" | "clock">;

// A test fire's stored synthetic data carries enqueued_at with milliseconds; a delivery spells it to the second (spec: enqueued_at).
const SYNTHETIC = dsql.raw(
  `case when d.synthetic_data is null then null else jsonb_set(d.synthetic_data, '{enqueued_at}', to_jsonb(to_char(d.enqueued_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))) end`,
);

/** A claimed delivery's event id (a test fire's derived from the delivery's); `nowMs`: the attempt's time. */
export function eventIdentity(
  row: Pick<ClaimedDelivery, "id" | "event_id">,
  nowMs: number,
): { eventId: string; nowMs: number } {
  return { eventId: row.event_id ?? `evt_${row.id.slice(4)}`, nowMs };
}

/** Queues a new delivery of `deliveryId`'s event, due now; throws AppError WEBHOOK_NOT_FOUND, DELIVERY_NOT_FOUND. */
export async function redeliver(
  deps: Deps,
  accountId: string,
  webhookId: string,
  deliveryId: string,
): Promise<{ id: string; enqueued_at: string }> {
  await requireWebhook(deps.db, accountId, webhookId);
  const notFound = new AppError(
    "DELIVERY_NOT_FOUND",
    `No delivery with id ${JSON.stringify(deliveryId.slice(0, 100))} on this webhook.`,
  );
  if (!isId("dlv", deliveryId)) throw notFound;
  const now = new Date(deps.clock.now()).toISOString();
  const id = newId("dlv");
  return deps.db.transaction(async (tx) => {
    const rows = (await tx.execute(dsql`
      insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, synthetic_data, created_at, updated_at, sequence)
      select ${id}, d.webhook_id, d.account_id, d.event_id, d.shipment_id, d.event_type, d.mode, 'pending', 0, ${now}, d.enqueued_at, ${SYNTHETIC}, ${now}, ${now}, d.sequence
      from deliveries d
      where d.id = ${deliveryId} and d.webhook_id = ${webhookId} and d.account_id = ${accountId}
      returning to_json(enqueued_at)#>>'{}' as enqueued_at
    `)) as unknown as { enqueued_at: string }[];
    if (!rows[0]) throw notFound;
    await tx.execute(dsql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
    return { id, enqueued_at: new Date(rows[0].enqueued_at).toISOString() };
  });
}

/**
 * Queues again the newest delivery of each event that ended abandoned or dropped at or after `sinceMs` (within
 * {@link RECOVER_WINDOW_MS}, the caller's check); test fires and audits are left out (docs/events.md, "Redeliver
 * and recover"). Returns how many. Throws AppError WEBHOOK_NOT_FOUND.
 */
export async function recover(deps: Deps, accountId: string, webhookId: string, sinceMs: number): Promise<number> {
  await requireWebhook(deps.db, accountId, webhookId);
  const now = new Date(deps.clock.now()).toISOString();
  const since = new Date(sinceMs).toISOString();
  return deps.db.transaction(async (tx) => {
    // A failed row's updated_at is when it ended; a later delivery of the same event supersedes it. Test fires
    // (no event) are never recovered: each copy would count as another event and the next call would double them.
    const failed = (await tx.execute(dsql`
      select d.id, d.created_at from deliveries d
      where d.webhook_id = ${webhookId} and d.account_id = ${accountId}
        and d.state in ('abandoned', 'dropped') and d.updated_at >= ${since}
        and d.event_id is not null and not exists (
          select 1 from deliveries n where n.webhook_id = d.webhook_id and n.event_id = d.event_id and n.id > d.id)
    `)) as unknown as { id: string; created_at: string }[];
    if (failed.length === 0) return 0;
    // With its partition key each source row is one partition's key probe.
    const pairs = failed.map((f) => ({ src: f.id, src_at: f.created_at, id: newId("dlv") }));
    const rows = (await tx.execute(dsql`
      insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, synthetic_data, created_at, updated_at, sequence)
      select v.id, d.webhook_id, d.account_id, d.event_id, d.shipment_id, d.event_type, d.mode, 'pending', 0, ${now}, d.enqueued_at, ${SYNTHETIC}, ${now}, ${now}, d.sequence
      from jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) as v(src text, src_at timestamptz, id text)
      join deliveries d on d.id = v.src and d.created_at = v.src_at
      returning id
    `)) as unknown as { id: string }[];
    if (rows.length) await tx.execute(dsql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
    return rows.length;
  });
}
