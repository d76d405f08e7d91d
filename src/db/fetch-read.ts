/** The fast path's read of following/store.ts, prepared once per pool by the composition root (`Services.fetchRead`). */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { shipmentColumns, shipments } from "./schema/index.ts";

/** The prepared read on pool `db`: the shipment row by courier and AWB, whether the account follows it, whether it is scheduled. */
export const createFetchRead = (db: Db) =>
  db
    .select({
      ...shipmentColumns,
      following: sql<boolean>`exists(select 1 from follows f where f.account_id = ${sql.placeholder("account")} and f.shipment_id = ${shipments.id})`,
      queued: sql<boolean>`(exists(select 1 from recheck_schedule q where q.shipment_id = ${shipments.id}) or exists(select 1 from recheck_queue q where q.shipment_id = ${shipments.id}))`,
    })
    .from(shipments)
    .where(and(eq(shipments.courier, sql.placeholder("courier")), eq(shipments.trackingNumber, sql.placeholder("awb"))))
    .limit(1)
    .prepare("shipment_for_fetch");

/** The fast path's prepared read of one pool (see {@link createFetchRead}). */
export type FetchRead = ReturnType<typeof createFetchRead>;
