/** Reading and unfollowing an account's followed shipments (docs/shipments.md): stored record only, no courier call. */
import { and, eq } from "drizzle-orm";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import { follows, shipmentColumns, shipments } from "../../db/schema/index.ts";
import { AppError, RequestValidationError } from "../../lib/errors.ts";
import { applyMetadataPatch, MAX_METADATA_KEYS, type Metadata } from "../../domain/follow-data.ts";
import { courierBySlug, normaliseTrackingNumber, type Courier } from "../couriers/catalogue.ts";
import { toSpecDate } from "../../domain/dates.ts";
import type { ReasonCode } from "../../domain/ndr.ts";
import { rowToRecord, type ShipmentRow } from "../following/store.ts";
import { WEBHOOK_SPELLING, type ShipmentState } from "../../domain/states.ts";
import { setShipmentPincodes, unfollow, updateFollowData, type FollowData } from "../following/follows.ts";
import { trackingData, type TrackingData } from "../tracking/view.ts";
import type { ListShipmentsInput, UpdateShipmentInput } from "./model.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import type { PredictedDelivery } from "../../domain/predictions.ts";
import { StatsIndex } from "../predictions/stats.ts";
import { dateTimeMs } from "../../http/text.ts";
import { publicUrls, rotatePublicLink } from "../following/public-links.ts";
import { actionsOf, deleteActionsOf } from "../actions/service.ts";
import type { ShipmentAction } from "../actions/model.ts";
import { defined } from "../../lib/defined.ts";

const notFollowed = (courier: string, n: string) =>
  new AppError(
    "SHIPMENT_NOT_FOLLOWED",
    `This account does not follow ${courier.slice(0, 64)} ${n.slice(0, 64)}; follow it with POST /v1/shipments or GET /v1/track.`,
  );

/** ISO instant of a stored text timestamp, or null when it is not one. */
function iso(v: string | null | undefined): string | null {
  if (!v) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

interface ListRow {
  courier: string;
  tracking_number: string;
  state: string;
  most_recent_status: string;
  newest_at: string | null;
  estimated_delivery: string | null;
  followed_since: string;
  next_check_at: string | null;
  reason_code: ReasonCode | null;
  cursor_micros: string;
  shipment_id: string;
  reference: string | null;
  metadata: Metadata | null;
  stalled: boolean;
  /** The newest checkpoint and the pickup (the oldest past `pending`), for the prediction; null without them. */
  newest: StoredCheckpoint | null;
  pickup: StoredCheckpoint | null;
  origin_city: string | null;
  destination_city: string | null;
  origin_pincode: string | null;
  destination_pincode: string | null;
}

/** `predicted_delivery` of a list row, when there is one (docs/predictions.md). */
function predicted(stats: StatsIndex, r: ListRow): { predicted_delivery?: PredictedDelivery } {
  if (!r.newest || !r.pickup) return {};
  const checkpoints = r.newest.at === r.pickup.at ? [r.newest] : [r.newest, r.pickup];
  const p = stats.predict(r.courier, {
    state: r.state,
    checkpoints,
    originCity: r.origin_city,
    destinationCity: r.destination_city,
    originPincode: r.origin_pincode,
    destinationPincode: r.destination_pincode,
  });
  return p ? { predicted_delivery: p } : {};
}

/** Cursor: `<follow time in µs since the epoch>.<shipment id>`, base64url (opaque to clients). */
const encodeCursor = (r: ListRow) => Buffer.from(`${r.cursor_micros}.${r.shipment_id}`).toString("base64url");
function decodeCursor(c: string): { micros: string; id: string } | undefined {
  const m = /^(\d{1,20})\.(shp_[0-9a-f]{32})$/.exec(Buffer.from(c, "base64url").toString("utf8"));
  const [, micros, id] = m ?? [];
  return micros && id ? { micros, id } : undefined;
}

/**
 * The account's followed shipments, newest follow first, filtered (docs/shipments.md#reading); keyset pages on
 * (follow time, shipment id) never repeat or skip; an unreadable cursor gives an empty page, never an error.
 * `opts.match`: the dashboard search (normalised AWB or reference).
 */
export async function listShipments(
  db: Db,
  accountId: string,
  q: ListShipmentsInput,
  opts: { match?: string; links?: Parameters<typeof publicUrls>[0] } = {},
  stats: StatsIndex = new StatsIndex(),
) {
  const sql = db.$client;
  const limit = q.limit ?? 20;
  const cursor = q.cursor ? decodeCursor(q.cursor) : undefined;
  if (q.cursor && !cursor) return { shipments: [], count: 0, next_cursor: null };
  const updatedSinceMs = q.updated_since ? dateTimeMs(q.updated_since) : undefined;
  const state = q.state ? Object.entries(WEBHOOK_SPELLING).find(([, w]) => w === q.state)?.[0] : undefined;
  const rows = (await sql`
    select s.courier, s.tracking_number, s.state, s.most_recent_status, shipment_newest_checkpoint(s)->>'at' as newest_at,
      to_char(s.estimated_delivery, 'YYYY-MM-DD') as estimated_delivery,
      to_json(f.created_at)#>>'{}' as followed_since, to_json(coalesce(r.due_at, c.due_at, q.due_at))#>>'{}' as next_check_at, s.reason_code,
      (extract(epoch from f.created_at) * 1000000)::bigint::text as cursor_micros, s.id as shipment_id, f.reference, f.metadata,
      s.stalled_at is not null as stalled, shipment_newest_checkpoint(s) as newest, s.origin_city, s.destination_city, s.origin_pincode, s.destination_pincode,
      (select e from jsonb_array_elements(shipment_history(s)) e where e->>'state' <> 'pending' order by e->>'at' limit 1) as pickup
    from follows f join shipments s on s.id = f.shipment_id
      left join recheck_queue q on q.shipment_id = f.shipment_id
      left join recheck_schedule r on r.shipment_id = f.shipment_id
      left join recheck_chunks c on c.id = r.chunk_id
    where f.account_id = ${accountId}
      ${state ? sql`and s.state = ${state}` : sql``}
      ${q.courier ? sql`and s.courier = ${q.courier.toLowerCase()}` : sql``}
      ${q.reference !== undefined ? sql`and f.reference = ${q.reference}` : sql``}
      ${q.reason_code ? sql`and s.reason_code = ${q.reason_code}` : sql``}
      ${opts.match !== undefined ? sql`and (s.tracking_number = ${normaliseTrackingNumber(opts.match)} or f.reference = ${opts.match})` : sql``}
      ${q.stalled ? sql`and (s.stalled_at is not null) = ${q.stalled === "true"}` : sql``}
      ${updatedSinceMs !== undefined ? sql`and s.updated_at >= ${new Date(updatedSinceMs).toISOString()}` : sql``}
      ${cursor ? sql`and (f.created_at, f.shipment_id) < (timestamptz 'epoch' + ${cursor.micros}::bigint * interval '1 microsecond', ${cursor.id})` : sql``}
    order by f.created_at desc, f.shipment_id desc
    limit ${limit + 1}
  `) as unknown as ListRow[];
  const page = rows.slice(0, limit);
  const urls = opts.links
    ? await publicUrls(
        opts.links,
        accountId,
        page.map((r) => r.shipment_id),
      )
    : new Map<string, string | null>();
  const shipments = page.map((r) => ({
    courier: r.courier,
    tracking_number: r.tracking_number,
    status: WEBHOOK_SPELLING[r.state as ShipmentState] ?? r.state,
    most_recent_status: r.most_recent_status,
    last_checkpoint_at: iso(r.newest_at),
    estimated_delivery_date: r.estimated_delivery ? toSpecDate(r.estimated_delivery) : "",
    followed_since: defined(iso(r.followed_since), "follows.created_at"),
    next_check_at: iso(r.next_check_at),
    reason_code: r.reason_code,
    reference: r.reference,
    metadata: r.metadata ?? {},
    stalled: r.stalled,
    ...predicted(stats, r),
    public_url: urls.get(r.shipment_id) ?? null,
  }));
  const last = page.at(-1);
  return { shipments, count: shipments.length, next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/** The followed shipment's row and courier. @throws AppError SHIPMENT_NOT_FOLLOWED (404). */
async function requireFollowed(
  db: Db,
  accountId: string,
  slug: string,
  rawNumber: string,
): Promise<{ courier: Courier; row: ShipmentRow; follow: FollowData }> {
  const courier = courierBySlug(slug.trim().toLowerCase());
  const n = normaliseTrackingNumber(rawNumber);
  if (!courier) throw notFollowed(slug, n);
  const [found] = await db
    .select({ s: shipmentColumns, reference: follows.reference, metadata: follows.metadata })
    .from(shipments)
    .innerJoin(follows, and(eq(follows.shipmentId, shipments.id), eq(follows.accountId, accountId)))
    .where(and(eq(shipments.courier, courier.slug), eq(shipments.trackingNumber, n)))
    .limit(1);
  if (!found) throw notFollowed(courier.slug, n);
  return { courier, row: found.s, follow: { reference: found.reference, metadata: found.metadata ?? {} } };
}

/** A followed shipment's stored `GET /v1/track` `data` (`FetchTime` 0) and its follow. @throws AppError SHIPMENT_NOT_FOLLOWED (404). */
export async function storedShipment(
  deps: Pick<AppDeps, "db" | "services" | "secretsKey" | "config">,
  accountId: string,
  slug: string,
  rawNumber: string,
): Promise<{ data: TrackingData; follow: FollowData & { public_url: string | null }; actions: ShipmentAction[] }> {
  const started = performance.now();
  const { courier, row, follow } = await requireFollowed(deps.db, accountId, slug, rawNumber);
  const record = rowToRecord(row);
  const history = {
    predicted: (await deps.services.transitStats.get()).predict(courier.slug, {
      ...record,
      originPincode: row.originPincode,
      destinationPincode: row.destinationPincode,
    }),
    stalled: row.stalledAt !== null,
  };
  return {
    data: trackingData(
      courier,
      record,
      { fetchMs: 0, executionMs: performance.now() - started, noRecord: false },
      history,
    ),
    follow: { ...follow, public_url: (await publicUrls(deps, accountId, [row.id])).get(row.id) ?? null },
    actions: await actionsOf(deps, accountId, row.id),
  };
}

/**
 * Changes a follow's `reference` and `metadata` (docs/shipments.md#reference-and-metadata--decisions).
 * @throws AppError SHIPMENT_NOT_FOLLOWED (404); RequestValidationError (422) over {@link MAX_METADATA_KEYS} keys.
 */
export async function updateShipment(
  db: Db,
  accountId: string,
  slug: string,
  rawNumber: string,
  input: UpdateShipmentInput,
) {
  const courier = courierBySlug(slug.trim().toLowerCase());
  const n = normaliseTrackingNumber(rawNumber);
  if (!courier) throw notFollowed(slug, n);
  const next = await updateFollowData(db, accountId, courier.slug, n, (current) => {
    const metadata = input.metadata ? applyMetadataPatch(current.metadata, input.metadata) : current.metadata;
    if (Object.keys(metadata).length > MAX_METADATA_KEYS)
      throw new RequestValidationError([
        {
          loc: ["body", "metadata"],
          msg: `Metadata should have at most ${MAX_METADATA_KEYS} keys once changed`,
          type: "too_long",
        },
      ]);
    return { reference: input.reference === undefined ? current.reference : input.reference, metadata };
  });
  if (!next) throw notFollowed(courier.slug, n);
  const pins = { originPincode: input.origin_pincode, destinationPincode: input.destination_pincode };
  await setShipmentPincodes(db.$client, [{ courier: courier.slug, awb: n, ...pins }], true);
  return { courier: courier.slug, tracking_number: n, ...next };
}

/**
 * Revokes the follow's public link and issues a new one (docs/tracking-page.md#links).
 * @throws AppError SHIPMENT_NOT_FOLLOWED (404)
 */
export async function rotateShipmentLink(
  deps: Parameters<typeof rotatePublicLink>[0],
  accountId: string,
  slug: string,
  rawNumber: string,
) {
  const { courier, row } = await requireFollowed(deps.db, accountId, slug, rawNumber);
  const url = await rotatePublicLink(deps, accountId, row.id);
  if (url === undefined) throw notFollowed(courier.slug, row.trackingNumber);
  return { courier: courier.slug, tracking_number: row.trackingNumber, public_url: url };
}

/** Stops following (which revokes its public link: the follow row and its token hash go); an unfollowed shipment leaves the re-check schedule. @throws AppError SHIPMENT_NOT_FOLLOWED (404). */
export async function unfollowShipment(db: Db, accountId: string, slug: string, rawNumber: string): Promise<void> {
  const courier = courierBySlug(slug.trim().toLowerCase());
  const n = normaliseTrackingNumber(rawNumber);
  if (!courier) throw notFollowed(slug, n);
  if (!(await unfollow(db, accountId, courier.slug, n))) throw notFollowed(courier.slug, n);
  await deleteActionsOf(db, accountId, courier.slug, n);
}
