/** Rows for delivery tests: a followed shipment and an event fanned out to the outbox. */
import type { Db } from "../../src/db/client.ts";
import { events, follows, shipments } from "../../src/db/schema/index.ts";
import type { StoredCheckpoint } from "../../src/domain/checkpoint.ts";
import { newId } from "../../src/lib/ids.ts";
import type { EventType } from "../../src/domain/events.ts";
import type { ShipmentState } from "../../src/domain/states.ts";
import { fanOutEvent } from "../../src/modules/webhooks/delivery/outbox.ts";

export function checkpoint(
  state: ShipmentState,
  localDate: string,
  localTime: string,
  activity = `scan ${localDate} ${localTime}`,
  location = "Mumbai",
): StoredCheckpoint {
  return {
    state,
    subStatus: null,
    activity,
    location,
    localDate,
    localTime,
    at: `${localDate}T${localTime}:00Z`,
    rawCode: null,
    rawStatus: null,
    remark: null,
  };
}

/** A shipment followed by `accountIds`. */
export async function shipment(
  db: Db,
  accountIds: string[],
  opts: { courier?: string; trackingNumber?: string; state?: string; checkpoints?: StoredCheckpoint[] } = {},
) {
  const id = newId("shp");
  const cps = opts.checkpoints ?? [
    checkpoint("in_transit", "2026-11-03", "09:15", "Picked up"),
    checkpoint("in_transit", "2026-11-04", "18:40", "Reached hub", "Mumbai to Pune"),
  ];
  await db.insert(shipments).values({
    id,
    courier: opts.courier ?? "delhivery",
    trackingNumber: opts.trackingNumber ?? `${Date.now()}${Math.floor(Math.random() * 10)}`.slice(-13),
    state: opts.state ?? "in_transit",
    mostRecentStatus: "In transit",
    checkpoints: cps,
    checkpointCount: cps.length,
    originCity: "Mumbai",
    destinationCity: "Pune",
    followers: accountIds.length,
  });
  if (accountIds.length)
    await db.insert(follows).values(accountIds.map((accountId) => ({ accountId, shipmentId: id })));
  return id;
}

/** Stores an event and fans it out in one transaction, as the re-check does. Returns rows inserted. */
export async function emit(db: Db, shipmentId: string, type: EventType, at: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const eventId = newId("evt");
    await tx.insert(events).values({ id: eventId, shipmentId, type, status: "in_transit", enqueuedAt: at });
    return fanOutEvent(tx, { eventId, shipmentId, type, enqueuedAt: at });
  });
}
