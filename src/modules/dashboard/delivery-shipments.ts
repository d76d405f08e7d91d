/** Which shipment each recent delivery was about: the followed shipment's, or a test fire's sample. */
import { inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { deliveries, shipments } from "../../db/schema/index.ts";

export interface DeliveryShipment {
  courier: string;
  trackingNumber: string;
}

/** `delivery id → shipment` for the given deliveries (those with neither a shipment nor a sample are absent). */
export async function shipmentsOfDeliveries(db: DbOrTx, deliveryIds: string[]): Promise<Map<string, DeliveryShipment>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db
    .select({
      id: deliveries.id,
      courier: sql<string | null>`coalesce(${shipments.courier}, ${deliveries.syntheticData}->>'courier')`,
      trackingNumber: sql<
        string | null
      >`coalesce(${shipments.trackingNumber}, ${deliveries.syntheticData}->>'tracking_number')`,
    })
    .from(deliveries)
    .leftJoin(shipments, sql`${shipments.id} = ${deliveries.shipmentId}`)
    .where(inArray(deliveries.id, deliveryIds));
  const out = new Map<string, DeliveryShipment>();
  for (const r of rows)
    if (r.courier && r.trackingNumber) out.set(r.id, { courier: r.courier, trackingNumber: r.trackingNumber });
  return out;
}
