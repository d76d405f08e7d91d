/** Stalled shipments (docs/predictions.md#trackingstalled); the mark is guarded on the newest checkpoint read, so a fresh fetch wins. */
import { sql as dsql } from "drizzle-orm";
import type { EventSink } from "../../core-deps.ts";
import type { Db } from "../../db/client.ts";
import { events } from "../../db/schema/index.ts";
import type { StoredEvent } from "../../domain/events.ts";
import { WEBHOOK_SPELLING, type ShipmentState } from "../../domain/states.ts";
import { newId } from "../../lib/ids.ts";
import { defined } from "../../lib/defined.ts";

export interface StallCheckResult {
  checked: number;
  stalled: number;
}

/** Seconds without a new checkpoint after which a shipment of `courier` on that lane is stalled. */
export type StallThreshold = (courier: string, originCity: string | null, destinationCity: string | null) => number;

interface Candidate {
  id: string;
  courier: string;
  origin_city: string | null;
  destination_city: string | null;
  newest_at: string;
}

/**
 * Marks the shipments stalled at `nowMs` (ms) and emits their events through `onEvents`.
 * @throws whatever the database throws; finished batches stay marked.
 */
export async function markStalled(
  deps: { db: Db; onEvents: EventSink },
  thresholdS: StallThreshold,
  nowMs: number,
  batchSize = 2_000,
): Promise<StallCheckResult> {
  const sql = deps.db.$client;
  const result: StallCheckResult = { checked: 0, stalled: 0 };
  let after = "";
  for (;;) {
    const rows = (await sql`
      select q.shipment_id as id, s.courier, s.origin_city, s.destination_city,
        coalesce(shipment_newest_checkpoint(s)->>'at', to_json(s.created_at)#>>'{}') as newest_at
      from (select shipment_id from recheck_schedule union all select shipment_id from recheck_queue) q
        join shipments s on s.id = q.shipment_id
      where q.shipment_id > ${after} and s.stalled_at is null and not s.terminal
      order by q.shipment_id limit ${batchSize}`) as unknown as Candidate[];
    result.checked += rows.length;
    const due = rows.filter(
      (r) => nowMs - Date.parse(r.newest_at) > thresholdS(r.courier, r.origin_city, r.destination_city) * 1000,
    );
    if (due.length > 0) result.stalled += await mark(deps, due, nowMs);
    if (rows.length < batchSize) return result;
    after = defined(rows.at(-1), "the batch's last row").id;
  }
}

async function mark(deps: { db: Db; onEvents: EventSink }, due: Candidate[], nowMs: number): Promise<number> {
  const now = new Date(nowMs);
  const enqueuedAt = new Date(Math.floor(nowMs / 1000) * 1000);
  return deps.db.transaction(async (tx) => {
    const marked = (await tx.execute(dsql`
      update shipments s set stalled_at = ${now.toISOString()}
      from jsonb_to_recordset(${JSON.stringify(due.map((d) => ({ id: d.id, newest: d.newest_at })))}::jsonb) as v(id text, newest text)
      where s.id = v.id and s.stalled_at is null and not s.terminal
        and coalesce(shipment_newest_checkpoint(s)->>'at', to_json(s.created_at)#>>'{}') = v.newest
      returning s.id, s.state`)) as unknown as { id: string; state: ShipmentState }[];
    if (marked.length === 0) return 0;
    const out: (StoredEvent & { state: ShipmentState })[] = marked.map((m) => ({
      eventId: newId("evt"),
      shipmentId: m.id,
      type: "tracking.stalled",
      enqueuedAt,
      state: m.state,
    }));
    await tx.insert(events).values(
      out.map((e) => ({
        id: e.eventId,
        shipmentId: e.shipmentId,
        type: e.type,
        status: WEBHOOK_SPELLING[e.state],
        enqueuedAt,
      })),
    );
    await deps.onEvents(
      tx,
      out.map(({ state: _, ...e }) => e),
    );
    return marked.length;
  });
}
