/** The EDD backtest behind `bun run backtest:edd` (docs/predictions.md#backtest): predict at pickup, compare with delivery. */
import type { Db } from "../../db/client.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import { estimateDelivery } from "../../domain/estimates.ts";
import { canonicalCity, parsePincode, type Place } from "../../domain/places.ts";
import { BASES, daysBetween, MIN_SAMPLES, pickupOf, STATS_WINDOW_DAYS, type Basis } from "../../domain/predictions.ts";
import type { StatsIndex } from "./stats.ts";

export interface BacktestCase {
  courier: string;
  originCity: string | null;
  destinationCity: string | null;
  /** Indian PINs when stored; absent or null: none. */
  originPincode?: string | null;
  destinationPincode?: string | null;
  /** The full stored history, newest first. */
  checkpoints: readonly StoredCheckpoint[];
  /** The local day it was delivered, `YYYY-MM-DD`. */
  deliveredOn: string;
  /** The courier's own EDD, or null. */
  courierEdd: string | null;
}

/** Figures of one courier; shares 0–1, errors in whole days, null without cases. */
export interface BacktestFigures {
  courier: string;
  deliveries: number;
  /** Deliveries a prediction existed for, the share of them inside [earliest, latest], the median |date − delivered|. */
  predicted: number;
  insideShare: number | null;
  medianAbsErrorDays: number | null;
  /** The same for predictions from lane statistics, city or pincode (lanes with ≥ MIN_SAMPLES deliveries). */
  lanePredicted: number;
  laneInsideShare: number | null;
  laneMedianAbsErrorDays: number | null;
  /** Deliveries with a courier EDD, the share delivered on that day, the median |EDD − delivered|. */
  courierEdds: number;
  courierEddExactShare: number | null;
  courierEddMedianAbsErrorDays: number | null;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  const [lo, hi] = [s[m - 1], s[m]];
  if (hi === undefined) return null;
  return s.length % 2 || lo === undefined ? hi : (lo + hi) / 2;
};
const share = (hits: number, n: number) => (n === 0 ? null : hits / n);

/** Replays `cases` against `index`; one figure set per courier, by courier slug. */
export async function backtest(
  index: StatsIndex,
  cases: Iterable<BacktestCase> | AsyncIterable<BacktestCase>,
): Promise<BacktestFigures[]> {
  const by = new Map<string, { n: number; all: [boolean, number][]; lane: [boolean, number][]; edd: number[] }>();
  for await (const c of cases) {
    let f = by.get(c.courier);
    if (!f) {
      f = { n: 0, all: [], lane: [], edd: [] };
      by.set(c.courier, f);
    }
    f.n++;
    if (c.courierEdd) f.edd.push(Math.abs(daysBetween(c.courierEdd, c.deliveredOn)));
    const pickup = pickupOf(c.checkpoints);
    if (!pickup) continue;
    // What was known at pickup: the checkpoints up to it.
    const known = c.checkpoints.filter((k) => k.at <= pickup.at);
    const p = index.predict(c.courier, {
      state: "in_transit",
      checkpoints: known,
      originCity: c.originCity,
      destinationCity: c.destinationCity,
      originPincode: c.originPincode,
      destinationPincode: c.destinationPincode,
    });
    if (!p) continue;
    const hit: [boolean, number] = [
      p.earliest <= c.deliveredOn && c.deliveredOn <= p.latest,
      Math.abs(daysBetween(p.date, c.deliveredOn)),
    ];
    f.all.push(hit);
    if (p.basis === "lane" || p.basis === "pincode_lane") f.lane.push(hit);
  }
  return [...by]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([courier, f]) => ({
      courier,
      deliveries: f.n,
      predicted: f.all.length,
      insideShare: share(f.all.filter(([i]) => i).length, f.all.length),
      medianAbsErrorDays: median(f.all.map(([, e]) => e)),
      lanePredicted: f.lane.length,
      laneInsideShare: share(f.lane.filter(([i]) => i).length, f.lane.length),
      laneMedianAbsErrorDays: median(f.lane.map(([, e]) => e)),
      courierEdds: f.edd.length,
      courierEddExactShare: share(f.edd.filter((e) => e === 0).length, f.edd.length),
      courierEddMedianAbsErrorDays: median(f.edd),
    }));
}

/** Estimate figures of one basis; shares 0–1, errors in whole days, null without cases. */
export interface EstimateBasisFigures {
  basis: Basis;
  /** Cases this basis had statistics (≥ MIN_SAMPLES) for: the share inside [earliest, latest], the median |date − delivered|. */
  estimated: number;
  insideShare: number | null;
  medianAbsErrorDays: number | null;
  /** Cases `GET /v1/estimates` answers from this basis (the most specific with enough history, places as given). */
  answered: number;
}

/** The places a case's merchant would give: the PIN where known, else the city. */
function placesOf(c: BacktestCase): [Place, Place] | undefined {
  const place = (pin: string | null | undefined, city: string | null): Place | undefined => {
    const p = parsePincode(pin);
    if (p) return { kind: "pincode", pincode: p };
    const k = canonicalCity(city);
    return k ? { kind: "city", city: k } : undefined;
  };
  const o = place(c.originPincode, c.originCity);
  const d = place(c.destinationPincode, c.destinationCity);
  return o && d ? [o, d] : undefined;
}

/**
 * Replays `cases` through the estimate of `GET /v1/estimates` (ship date: the local day of the pickup), once per
 * basis: with PINs for `pincode_lane` and `region`, with cities for `lane`, for every case that basis has
 * statistics for; `answered` counts the basis the endpoint picks for the places as given (PIN, else city).
 */
export async function backtestEstimates(
  index: StatsIndex,
  cases: Iterable<BacktestCase> | AsyncIterable<BacktestCase>,
): Promise<EstimateBasisFigures[]> {
  type Tally = { hits: [boolean, number][]; answered: number };
  const by = Object.fromEntries(BASES.map((b): [Basis, Tally] => [b, { hits: [], answered: 0 }])) as Record<
    Basis,
    Tally
  >;
  for await (const c of cases) {
    const pickup = pickupOf(c.checkpoints);
    const given = placesOf(c);
    if (!pickup || !given) continue;
    const shipDate = pickup.localDate;
    const answer = index.estimate(c.courier, given[0], given[1], shipDate);
    if (answer) by[answer.basis].answered++;
    const byCity = placesOf({ ...c, originPincode: null, destinationPincode: null });
    const stats = [
      ...index.estimateCandidates(c.courier, ...given),
      ...(byCity ? index.estimateCandidates(c.courier, ...byCity) : []),
    ];
    for (const basis of BASES) {
      const stat = stats.find((s) => s?.basis === basis && s.transitCount >= MIN_SAMPLES);
      const e = estimateDelivery(stat, shipDate);
      if (e)
        by[basis].hits.push([
          e.earliest <= c.deliveredOn && c.deliveredOn <= e.latest,
          Math.abs(daysBetween(e.date, c.deliveredOn)),
        ]);
    }
  }
  return BASES.map((basis) => {
    const f = by[basis];
    return {
      basis,
      estimated: f.hits.length,
      insideShare: share(f.hits.filter(([i]) => i).length, f.hits.length),
      medianAbsErrorDays: median(f.hits.map(([, e]) => e)),
      answered: f.answered,
    };
  });
}

/** Stored delivered shipments of the statistics window before `nowMs`, `batchSize` per statement (EDD caveat: docs/predictions.md#backtest). */
export async function* storedCases(db: Db, nowMs: number, batchSize = 5_000): AsyncGenerator<BacktestCase> {
  const cutoff = new Date(nowMs - STATS_WINDOW_DAYS * 86_400_000).toISOString().slice(0, 10);
  let after = "";
  for (;;) {
    const rows = await db.$client<
      {
        id: string;
        courier: string;
        origin_city: string | null;
        destination_city: string | null;
        origin_pincode: string | null;
        destination_pincode: string | null;
        checkpoints: StoredCheckpoint[];
        delivered_at: string;
        edd: string | null;
      }[]
    >`
      select id, courier, origin_city, destination_city, origin_pincode, destination_pincode, shipment_history(s) as checkpoints, delivered_at, to_char(estimated_delivery, 'YYYY-MM-DD') as edd
      from shipments s where id > ${after} and state = 'delivered' and delivered_at >= ${cutoff} order by id limit ${batchSize}`;
    for (const r of rows)
      yield {
        courier: r.courier,
        originCity: r.origin_city,
        destinationCity: r.destination_city,
        originPincode: r.origin_pincode,
        destinationPincode: r.destination_pincode,
        checkpoints: r.checkpoints,
        deliveredOn: r.delivered_at.slice(0, 10),
        courierEdd: r.edd,
      };
    const last = rows.at(-1);
    if (rows.length < batchSize || !last) return;
    after = last.id;
  }
}
