/**
 * Generated delivery history with known per-lane distributions (docs/predictions.md, "Backtest"): for the
 * transit-statistics tests, `bun run backtest:edd --generated` and the 1M-shipment rebuild benchmark. Transit
 * times are log-normal per courier and lane (median and spread drawn once per lane from the seed); scans come at
 * exponential gaps between pickup and delivery. Times are IST (UTC+05:30) like the Indian couriers'.
 */
import type postgres from "postgres";
import type { StoredCheckpoint } from "../../src/domain/checkpoint.ts";
import { localDay } from "../../src/domain/predictions.ts";

export const HISTORY_COURIERS = ["delhivery", "bluedart", "dtdc"] as const;
export const HISTORY_CITIES = ["Mumbai", "Delhi", "Bengaluru", "Chennai", "Kolkata", "Pune", "Jaipur", "Kochi"];
const IST_MIN = 330;
const HOUR = 3_600_000;

/** A seeded uniform source in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const normal = (rnd: () => number) => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());

/** One lane's known transit distribution: log-normal, median `medianH` hours, log-spread `sigma`. */
export interface LaneModel {
  courier: string;
  origin: string;
  destination: string;
  medianH: number;
  sigma: number;
  /** Mean hours between scans. */
  meanGapH: number;
  /** Origin and destination PIN stored with each delivery; absent: none stored. */
  originPincode?: string;
  destinationPincode?: string;
}

/** A central PIN of each {@link HISTORY_CITIES} city, and one of an outlying sorting district of the same region. */
export const CITY_PINS: Readonly<Record<string, readonly [string, string]>> = {
  Mumbai: ["400001", "401101"],
  Delhi: ["110001", "121001"],
  Bengaluru: ["560001", "562101"],
  Chennai: ["600001", "603001"],
  Kolkata: ["700001", "712101"],
  Pune: ["411001", "412101"],
  Jaipur: ["302001", "303001"],
  Kochi: ["682001", "683101"],
};

/**
 * Each lane split in two pincode lanes: to the destination's central district at the lane's own distribution, and
 * to its outlying district `slower` times slower; the city lane is then their mixture (the estimate backtest).
 */
export function pincodeLanes(lanes: readonly LaneModel[], slower = 1.4): LaneModel[] {
  return lanes.flatMap((l) => {
    const [o] = CITY_PINS[l.origin]!;
    const [near, far] = CITY_PINS[l.destination]!;
    return [
      { ...l, originPincode: o, destinationPincode: near },
      { ...l, medianH: l.medianH * slower, originPincode: o, destinationPincode: far },
    ];
  });
}

/** Every courier × ordered city pair, each with its own distribution drawn from `seed`. */
export function laneModels(seed = 1): LaneModel[] {
  const rnd = seeded(seed);
  const out: LaneModel[] = [];
  for (const courier of HISTORY_COURIERS)
    for (const origin of HISTORY_CITIES)
      for (const destination of HISTORY_CITIES)
        if (origin !== destination)
          out.push({
            courier,
            origin,
            destination,
            medianH: 40 + rnd() * 110,
            sigma: 0.25 + rnd() * 0.25,
            meanGapH: 4 + rnd() * 8,
          });
  return out;
}

/** A generated delivered shipment: what `shipments` stores of one. */
export interface GeneratedDelivery {
  lane: LaneModel;
  trackingNumber: string;
  checkpoints: StoredCheckpoint[];
  pickupMs: number;
  deliveredMs: number;
  /** `YYYY-MM-DD`, IST. */
  deliveredOn: string;
  /** The courier's own EDD: its promised days, off by −1…+2 days; null for a third of the shipments. */
  courierEdd: string | null;
}

function checkpoint(
  state: StoredCheckpoint["state"],
  ms: number,
  location: string,
  activity: string,
): StoredCheckpoint {
  const local = new Date(ms + IST_MIN * 60_000).toISOString();
  return {
    state,
    subStatus: null,
    activity,
    location,
    localDate: local.slice(0, 10),
    localTime: local.slice(11, 16),
    at: new Date(ms).toISOString(),
    rawCode: null,
    rawStatus: null,
    remark: null,
  };
}

/**
 * `n` deliveries over `lanes` (chosen uniformly), picked up in the `spanDays` days before `endMs` minus their transit.
 * Checkpoints newest first, as stored.
 */
export function generateDeliveries(
  lanes: readonly LaneModel[],
  n: number,
  endMs: number,
  seed = 2,
  spanDays = 80,
): GeneratedDelivery[] {
  const rnd = seeded(seed);
  const out: GeneratedDelivery[] = [];
  for (let i = 0; i < n; i++) {
    const lane = lanes[Math.floor(rnd() * lanes.length)]!;
    const transitMs = lane.medianH * Math.exp(lane.sigma * normal(rnd)) * HOUR;
    const deliveredMs = endMs - Math.floor(rnd() * spanDays * 24 * HOUR);
    const pickupMs = deliveredMs - transitMs;
    const cps = [
      checkpoint("pending", pickupMs - 3 * HOUR, lane.origin, "Manifested"),
      checkpoint("in_transit", pickupMs, lane.origin, "Picked up"),
    ];
    for (
      let t = pickupMs + -Math.log(1 - rnd()) * lane.meanGapH * HOUR;
      t < deliveredMs - 2 * HOUR;
      t += -Math.log(1 - rnd()) * lane.meanGapH * HOUR
    )
      cps.push(checkpoint("in_transit", t, lane.origin, "In transit"));
    cps.push(checkpoint("delivered", deliveredMs, lane.destination, "Delivered"));
    const promised = Math.ceil(lane.medianH / 24) + Math.floor(rnd() * 4) - 1;
    out.push({
      lane,
      trackingNumber: `GEN${seed}X${i}`,
      checkpoints: cps.reverse(),
      pickupMs,
      deliveredMs,
      deliveredOn: localDay(deliveredMs, IST_MIN),
      courierEdd: rnd() < 1 / 3 ? null : localDay(pickupMs + promised * 24 * HOUR, IST_MIN),
    });
  }
  return out;
}

/** Stores `deliveries` as delivered shipments (nobody follows them), 1,000 rows per statement. */
export async function insertDeliveries(sql: postgres.Sql, deliveries: readonly GeneratedDelivery[]): Promise<void> {
  for (let i = 0; i < deliveries.length; i += 1_000) {
    const rows = deliveries.slice(i, i + 1_000).map((d) => ({
      id: `shp_${Bun.randomUUIDv7().replaceAll("-", "")}`,
      courier: d.lane.courier,
      tracking_number: d.trackingNumber,
      checkpoints: d.checkpoints,
      origin: d.lane.origin,
      destination: d.lane.destination,
      op: d.lane.originPincode ?? null,
      dp: d.lane.destinationPincode ?? null,
      delivered_at: d.deliveredOn,
      edd: d.courierEdd,
      checked: new Date(d.deliveredMs).toISOString(),
    }));
    await sql`
      insert into shipments (id, courier, tracking_number, state, most_recent_status, checkpoints, checkpoint_count, origin_city,
        destination_city, origin_pincode, destination_pincode, delivered_at, estimated_delivery, terminal, last_checked_at)
      select id, courier, tracking_number, 'delivered', 'Delivered', checkpoints, jsonb_array_length(checkpoints), origin, destination,
        op, dp, delivered_at, edd::date, true, checked::timestamptz
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as x(id text, courier text, tracking_number text, checkpoints jsonb, origin text, destination text, op text, dp text,
          delivered_at text, edd text, checked text)`;
  }
}
