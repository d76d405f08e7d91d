/** Follows, follower counts and the `recheck_queue` schedule; this module is their one writer (docs/spec-map.md#table-owners). */
import { and, eq, inArray, notExists } from "drizzle-orm";
import type postgres from "postgres";
import type { Db, DbOrTx } from "../../db/client.ts";
import { follows, recheckSchedule, shipments } from "../../db/schema/index.ts";
import { CONTRACTED_SQL } from "./layout.ts";
import { newId } from "../../lib/ids.ts";
import type { Metadata } from "../../domain/follow-data.ts";

/** One shipment to follow: a courier slug and a normalised AWB, with the courier's follow mode. */
export interface FollowItem {
  courier: string;
  awb: string;
  followMode: "scheduled" | "lookup";
}

/** Which of `keys` the account already follows (`courier/awb`), in the caller's transaction `tx`. */
export async function followedKeys(
  tx: postgres.TransactionSql,
  accountId: string,
  keys: readonly { courier: string; awb: string }[],
): Promise<Set<string>> {
  const rows = (await tx`
    select s.courier || '/' || s.tracking_number as k
    from jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) as v(courier text, awb text)
    join shipments s on s.courier = v.courier and s.tracking_number = v.awb
    join follows f on f.shipment_id = s.id and f.account_id = ${accountId}
  `) as unknown as { k: string }[];
  return new Set(rows.map((r) => r.k));
}

/** Follows `items` in `tx` with no courier call: unseen shipments stored pending, each non-terminal one due by `nowIso`. */
export async function followMany(
  tx: postgres.TransactionSql,
  accountId: string,
  items: readonly FollowItem[],
  nowIso: string,
): Promise<void> {
  const rows = JSON.stringify(
    items.map((v) => ({ id: newId("shp"), courier: v.courier, awb: v.awb, mode: v.followMode })),
  );
  await tx`
    insert into shipments (id, courier, tracking_number, follow_mode, created_at, updated_at)
    select v.id, v.courier, v.awb, v.mode, ${nowIso}, ${nowIso}
    from jsonb_to_recordset(${rows}::jsonb) as v(id text, courier text, awb text, mode text)
    on conflict (courier, tracking_number) do nothing
  `;
  await tx`
    with v as (select * from jsonb_to_recordset(${rows}::jsonb) as v(courier text, awb text)),
    s as (select s.id from shipments s join v on s.courier = v.courier and s.tracking_number = v.awb),
    f as (
      insert into follows (account_id, shipment_id, created_at) select ${accountId}, s.id, ${nowIso} from s
      on conflict do nothing returning shipment_id
    ),
    u as (
      update shipments set followers = followers + 1 where id in (select shipment_id from f)
      returning id, courier, tracking_number, terminal, last_checked_at
    )
    ,
    old as (
      insert into recheck_queue (shipment_id, courier, tracking_number, due_at)
      select id, courier, tracking_number, ${nowIso} from u where not terminal and not (${tx.unsafe(CONTRACTED_SQL)})
      on conflict (shipment_id) do update set due_at = least(recheck_queue.due_at, excluded.due_at)
      where exists (select 1 from u where u.id = recheck_queue.shipment_id and u.last_checked_at is null)
    )
    insert into recheck_schedule (shipment_id, courier, tracking_number, due_at)
    select id, courier, tracking_number, ${nowIso} from u where not terminal and ${tx.unsafe(CONTRACTED_SQL)}
    on conflict (shipment_id) do update set due_at = least(recheck_schedule.due_at, excluded.due_at)
    where exists (select 1 from u where u.id = recheck_schedule.shipment_id and u.last_checked_at is null)
  `;
}

/** PINs a merchant gives for a followed shipment (docs/predictions.md, "Pincode lanes"). */
export interface PincodeItem {
  courier: string;
  awb: string;
  originPincode?: string;
  destinationPincode?: string;
}

/**
 * Stores merchant-given PINs on the shipments of `items`: on follow only where none is known yet (`overwrite`
 * false), on a change (PATCH) in place of the stored one. A courier's answer that carries a PIN replaces either.
 */
export async function setShipmentPincodes(
  sql: postgres.Sql | postgres.TransactionSql,
  items: readonly PincodeItem[],
  overwrite: boolean,
): Promise<void> {
  const rows = items.filter((i) => i.originPincode || i.destinationPincode);
  if (rows.length === 0) return;
  const json = JSON.stringify(
    rows.map((i) => ({
      courier: i.courier,
      awb: i.awb,
      op: i.originPincode ?? null,
      dp: i.destinationPincode ?? null,
    })),
  );
  await sql`
    update shipments s
    set origin_pincode = ${overwrite ? sql`coalesce(v.op, s.origin_pincode)` : sql`coalesce(s.origin_pincode, v.op)`},
      destination_pincode = ${overwrite ? sql`coalesce(v.dp, s.destination_pincode)` : sql`coalesce(s.destination_pincode, v.dp)`}
    from jsonb_to_recordset(${json}::jsonb) as v(courier text, awb text, op text, dp text)
    where s.courier = v.courier and s.tracking_number = v.awb`;
}

/** The merchant's own data for one followed shipment (src/domain/follow-data.ts); an absent field is left as it is. */
export interface FollowDataItem {
  courier: string;
  awb: string;
  reference?: string;
  metadata?: Metadata;
}

/** Writes `reference` and/or `metadata` (replaced whole) on the account's follows of `items` in `tx`; one item per shipment. */
export async function setFollowData(
  tx: postgres.TransactionSql,
  accountId: string,
  items: readonly FollowDataItem[],
): Promise<void> {
  if (items.length === 0) return;
  const rows = JSON.stringify(
    items.map((i) => ({
      courier: i.courier,
      awb: i.awb,
      reference: i.reference ?? null,
      metadata: i.metadata ?? null,
    })),
  );
  await tx`
    update follows f
    set reference = coalesce(v.reference, f.reference), metadata = coalesce(v.metadata, f.metadata)
    from jsonb_to_recordset(${rows}::jsonb) as v(courier text, awb text, reference text, metadata jsonb), shipments s
    where s.courier = v.courier and s.tracking_number = v.awb and f.shipment_id = s.id and f.account_id = ${accountId}
  `;
}

export interface FollowData {
  reference: string | null;
  metadata: Metadata;
}

/** Changes a follow under a row lock: `change` returns new data or throws; undefined when not followed. */
export async function updateFollowData(
  db: Db,
  accountId: string,
  courier: string,
  awb: string,
  change: (current: FollowData) => FollowData,
): Promise<FollowData | undefined> {
  return db.$client.begin(async (tx) => {
    const [row] = (await tx`
      select f.shipment_id, f.reference, f.metadata from follows f join shipments s on s.id = f.shipment_id
      where f.account_id = ${accountId} and s.courier = ${courier} and s.tracking_number = ${awb}
      for update of f
    `) as unknown as { shipment_id: string; reference: string | null; metadata: Metadata }[];
    if (!row) return undefined;
    const next = change({ reference: row.reference, metadata: row.metadata ?? {} });
    await tx`
      update follows set reference = ${next.reference}, metadata = ${JSON.stringify(next.metadata)}::jsonb
      where account_id = ${accountId} and shipment_id = ${row.shipment_id}
    `;
    return next;
  }) as Promise<FollowData | undefined>;
}

/** Stops the account following courier + AWB (schedule row and fan-out go with it); false when it did not follow it. */
export async function unfollow(db: Db, accountId: string, courier: string, awb: string): Promise<boolean> {
  const rows = await db.$client`
    with f as (
      delete from follows using shipments s
      where follows.account_id = ${accountId} and follows.shipment_id = s.id and s.courier = ${courier} and s.tracking_number = ${awb}
      returning follows.shipment_id
    ),
    u as (
      update shipments set followers = greatest(followers - 1, 0) where id in (select shipment_id from f)
      returning id, followers
    ),
    q as (delete from recheck_queue where shipment_id in (select id from u where followers = 0)),
    r as (delete from recheck_schedule where shipment_id in (select id from u where followers = 0))
    select id from u
  `;
  return rows.length > 0;
}

/** Ids of the shipments the account follows (read before the account is deleted: its follows go with it). */
export async function followedShipmentIds(db: DbOrTx, accountId: string): Promise<string[]> {
  const rows = await db.select({ id: follows.shipmentId }).from(follows).where(eq(follows.accountId, accountId));
  return rows.map((r) => r.id);
}

/**
 * Deletes those of `ids` no account follows any more (events and `recheck_queue` rows cascade; `recheck_schedule`
 * has no foreign key, so its rows go here); used by account deletion.
 */
export async function deleteUnfollowedShipments(db: DbOrTx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .delete(recheckSchedule)
    .where(
      and(
        inArray(recheckSchedule.shipmentId, [...ids]),
        notExists(
          db
            .select({ one: follows.shipmentId })
            .from(follows)
            .where(eq(follows.shipmentId, recheckSchedule.shipmentId)),
        ),
      ),
    );
  await db
    .delete(shipments)
    .where(
      and(
        inArray(shipments.id, [...ids]),
        notExists(db.select({ one: follows.shipmentId }).from(follows).where(eq(follows.shipmentId, shipments.id))),
      ),
    );
}
