/** The events of one stored change (spec: Events; docs/predictions.md): the merge's event and `tracking.eta_changed`. */
import type { EventSink } from "../../core-deps.ts";
import type { Tx } from "../../db/client.ts";
import { events } from "../../db/schema/index.ts";
import type { EventType, StoredEvent } from "../../domain/events.ts";
import { effectiveEta, etaChanged, type PredictedDelivery } from "../../domain/predictions.ts";
import { isTerminal, WEBHOOK_SPELLING } from "../../domain/states.ts";
import { newId } from "../../lib/ids.ts";
import { currentTraceParent } from "../../lib/tracing.ts";
import type { ShipmentRecord } from "./normalise.ts";

/** The expected delivery day before and after a change, when it moved by a calendar day or more; else undefined. */
export function etaMove(
  before: { estimatedDelivery: string | null; predictedDelivery: PredictedDelivery | null } | undefined,
  record: ShipmentRecord,
  predicted: PredictedDelivery | undefined,
): { previous: string; current: string } | undefined {
  if (!before || isTerminal(record.state)) return undefined;
  const previous = effectiveEta(before.estimatedDelivery, before.predictedDelivery?.date);
  const current = effectiveEta(record.estimatedDelivery, predicted?.date);
  return previous !== null && current !== null && etaChanged(previous, current) ? { previous, current } : undefined;
}

/**
 * Writes `event` and the ETA move (either may be absent) for shipment `id` at `nowMs`, then fans them out.
 * @returns the outbox rows the sink wrote. @throws whatever the database throws.
 */
export async function writeEvents(
  tx: Tx,
  id: string,
  record: ShipmentRecord,
  event: EventType | null,
  eta: { previous: string; current: string } | undefined,
  nowMs: number,
  onEvents: EventSink,
): Promise<number> {
  // Fixed per event, UTC, to the second (spec: enqueued_at).
  const enqueuedAt = new Date(Math.floor(nowMs / 1000) * 1000);
  const status = WEBHOOK_SPELLING[record.state];
  const out: StoredEvent[] = [];
  if (event) out.push({ eventId: newId("evt"), shipmentId: id, type: event, enqueuedAt });
  if (eta) out.push({ eventId: newId("evt"), shipmentId: id, type: "tracking.eta_changed", enqueuedAt });
  if (out.length === 0) return 0;
  const traceParent = currentTraceParent(); // deliveries continue this trace (null when tracing is off)
  await tx.insert(events).values(
    out.map((e) => ({
      id: e.eventId,
      shipmentId: id,
      type: e.type,
      status,
      enqueuedAt,
      traceParent,
      ...(e.type === "tracking.eta_changed" && eta ? { etaPrevious: eta.previous, etaNew: eta.current } : {}),
    })),
  );
  return onEvents(tx, out);
}
