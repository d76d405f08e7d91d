/** `tracking.action_updated` (docs/ndr-actions.md): the events row of an NDR action's new status, written here as the owner of `events`. */
import { sql as dsql } from "drizzle-orm";
import type { EventSink } from "../../core-deps.ts";
import type { Tx } from "../../db/client.ts";
import type { EventType } from "../../domain/events.ts";
import { WEBHOOK_SPELLING, type ShipmentState } from "../../domain/states.ts";
import { newId } from "../../lib/ids.ts";
import { defined } from "../../lib/defined.ts";

/**
 * Writes the event of action `actionId` on `shipmentId` in the caller's transaction and hands it to `onEvents` for
 * `accountId`'s webhooks only (the action is that account's). `nowMs`: ms since the epoch.
 */
export async function writeActionEvent(
  deps: { onEvents: EventSink },
  tx: Tx,
  a: { actionId: string; shipmentId: string; accountId: string },
  nowMs: number,
): Promise<void> {
  const enqueuedAt = new Date(Math.floor(nowMs / 1000) * 1000);
  const eventId = newId("evt");
  const type: EventType = "tracking.action_updated";
  const [s] = (await tx.execute(dsql`select state from shipments where id = ${a.shipmentId}`)) as unknown as {
    state: ShipmentState;
  }[];
  await tx.execute(dsql`insert into events (id, shipment_id, type, status, enqueued_at, action_id)
    values (${eventId}, ${a.shipmentId}, ${type}, ${WEBHOOK_SPELLING[defined(s, `shipment ${a.shipmentId}`).state]},
      ${enqueuedAt.toISOString()}, ${a.actionId})`);
  await deps.onEvents(tx, [{ eventId, shipmentId: a.shipmentId, type, enqueuedAt, accountId: a.accountId }]);
}
