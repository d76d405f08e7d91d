/** Predictions from our own delivery history (docs/predictions.md): statistics keys, predicted window, stall threshold. */
import type { StoredCheckpoint } from "./checkpoint.ts";
import { earlierDay, laterDay } from "./dates.ts";
import { parsePincode, pinRegionKey, sortingDistrict } from "./places.ts";

/** Fewer samples than this back no prediction and no stall threshold of their own. */
export const MIN_SAMPLES = 30;
/** Delivered shipments of the last this many days feed the statistics. */
export const STATS_WINDOW_DAYS = 90;
/** Stall threshold bounds, seconds: never below 24 h; 72 h when no statistics have enough samples. */
export const STALL_FLOOR_S = 24 * 3600;
export const STALL_DEFAULT_S = 72 * 3600;
/** Histogram bucket widths, seconds: transit times and scan gaps (the percentiles' resolution). */
export const TRANSIT_BUCKET_S = 1800;
export const GAP_BUCKET_S = 900;

/**
 * Which statistics a figure comes from, most specific first: origin → destination sorting district (first three PIN
 * digits), origin → destination city, the destination's region (its PIN's postal region, else the part after the
 * city's last comma), the courier as a whole.
 */
export const BASES = ["pincode_lane", "lane", "region", "courier"] as const;
export type Basis = (typeof BASES)[number];

/** One row of statistics: durations in seconds. */
export interface TransitStat {
  basis: Basis;
  transitP05: number;
  transitP10: number;
  transitP25: number;
  transitP50: number;
  transitP75: number;
  transitP90: number;
  transitP95: number;
  transitCount: number;
  gapP50: number | null;
  gapP90: number | null;
  gapP95: number | null;
  gapCount: number;
}

/** The `PredictedDelivery` object: calendar days (`YYYY-MM-DD`) in the destination's local time. */
export interface PredictedDelivery {
  date: string;
  earliest: string;
  latest: string;
  basis: Basis;
  sample_size: number;
}

/** A city as the statistics key it: trimmed, lower case; null when empty. */
function cityKey(city: string | null | undefined): string | null {
  const k = (city ?? "").trim().toLowerCase();
  return k === "" ? null : k;
}

/** The region of a destination key: the part after its last comma (`"fresno, ca"` → `"ca"`), or null. */
export function regionOf(destinationKey: string | null): string | null {
  const i = destinationKey?.lastIndexOf(",") ?? -1;
  return destinationKey && i >= 0 ? cityKey(destinationKey.slice(i + 1)) : null;
}

/** The pincode statistics keys of a shipment: its sorting-district lane and its destination's postal region. */
export function pinKeys(
  originPincode: string | null | undefined,
  destinationPincode: string | null | undefined,
): { lane: [string, string] | null; region: string | null } {
  const o = parsePincode(originPincode);
  const d = parsePincode(destinationPincode);
  return { lane: o && d ? [sortingDistrict(o), sortingDistrict(d)] : null, region: d ? pinRegionKey(d) : null };
}

/** The lookup keys of a shipment's statistics, most specific first: `[basis, origin, destination]`. */
export function statKeys(
  originCity: string | null,
  destinationCity: string | null,
  originPincode?: string | null,
  destinationPincode?: string | null,
): [Basis, string, string][] {
  const o = cityKey(originCity);
  const d = cityKey(destinationCity);
  const r = regionOf(d);
  const pins = pinKeys(originPincode, destinationPincode);
  const keys: [Basis, string, string][] = [];
  if (pins.lane) keys.push(["pincode_lane", ...pins.lane]);
  if (o && d) keys.push(["lane", o, d]);
  if (pins.region) keys.push(["region", "", pins.region]);
  if (r) keys.push(["region", "", r]);
  keys.push(["courier", "", ""]);
  return keys;
}

/** The `q` quantile (0–1) of a histogram `bucket → count` of width `widthS`, like `percentile_cont`; NaN when empty. */
export function histogramQuantile(hist: ReadonlyMap<number, number>, q: number, widthS: number): number {
  const buckets = [...hist].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((s, [, n]) => s + n, 0);
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let below = 0;
  for (const [b, n] of buckets) {
    if (below + n >= rank) return (b + Math.max(0, rank - below) / n) * widthS;
    below += n;
  }
  const last = buckets.at(-1);
  return last ? (last[0] + 1) * widthS : Number.NaN;
}

/** The first statistics in `candidates` (most specific first) with at least {@link MIN_SAMPLES} of `what`. */
export function pickStat(
  candidates: readonly (TransitStat | undefined)[],
  what: "transit" | "gap",
): TransitStat | undefined {
  return candidates.find((s) => s !== undefined && (what === "transit" ? s.transitCount : s.gapCount) >= MIN_SAMPLES);
}

/** Minutes east of UTC of a checkpoint's local wall time (its `localDate`/`localTime` against `at`); 0 when unreadable. */
export function utcOffsetMinutes(c: Pick<StoredCheckpoint, "localDate" | "localTime" | "at">): number {
  const wall = Date.parse(`${c.localDate}T${(c.localTime || "00:00").slice(0, 5)}:00Z`);
  const at = Date.parse(c.at);
  if (Number.isNaN(wall) || Number.isNaN(at)) return 0;
  const m = Math.round((wall - at) / 60_000 / 15) * 15;
  return Math.abs(m) <= 14 * 60 ? m : 0;
}

/** The pickup: the oldest checkpoint past `pending` (checkpoints newest first), or undefined before one. */
export function pickupOf(checkpoints: readonly StoredCheckpoint[]): StoredCheckpoint | undefined {
  return checkpoints.findLast((c) => c.state !== "pending");
}

/** `YYYY-MM-DD` of instant `ms` at `offsetMin` minutes east of UTC. */
export const localDay = (ms: number, offsetMin: number) => new Date(ms + offsetMin * 60_000).toISOString().slice(0, 10);

/** The standard normal CDF (Abramowitz & Stegun 7.1.26, error below 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** The stored quantile levels as standard normal scores (probits of 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95). */
const PROBITS = [-1.6449, -1.2816, -0.6745, 0, 0.6745, 1.2816, 1.6449];

/** Share delivered within `s` s of pickup: log time linear in normal score between stored quantiles (log-normal model). */
export function transitCdf(stat: TransitStat, s: number): number {
  const ts = [
    stat.transitP05,
    stat.transitP10,
    stat.transitP25,
    stat.transitP50,
    stat.transitP75,
    stat.transitP90,
    stat.transitP95,
  ].map((t) => Math.log(Math.max(t, 1)));
  const x = Math.log(Math.max(s, 1));
  // Indices stay within the seven quantiles; NaN would only mark a bug.
  const nth = (xs: readonly number[], k: number) => xs[k] ?? Number.NaN;
  let i = 1;
  while (i < ts.length - 1 && x > nth(ts, i)) i++;
  const [t0, t1, z0, z1] = [nth(ts, i - 1), nth(ts, i), nth(PROBITS, i - 1), nth(PROBITS, i)];
  const z = t1 > t0 ? z0 + ((x - t0) * (z1 - z0)) / (t1 - t0) : x < t0 ? z0 : z1;
  return normalCdf(z);
}

const DAY_MS = 86_400_000;

/** Of the two local midnights around `ms`, the one whose delivered share is nearer `q` (docs/predictions.md). */
function nearestMidnight(stat: TransitStat, pickupMs: number, ms: number, offsetMin: number, q: number): number {
  const before = Math.floor((ms + offsetMin * 60_000) / DAY_MS) * DAY_MS - offsetMin * 60_000;
  const miss = (m: number) => Math.abs(transitCdf(stat, (m - pickupMs) / 1000) - q);
  return miss(before) <= miss(before + DAY_MS) ? before : before + DAY_MS;
}

/**
 * Predicted delivery from pickup `pickupMs`: p50 day as `date`, p10–p90 as `earliest`–`latest`, calendar days at
 * `offsetMin`; undefined under {@link MIN_SAMPLES}.
 */
export function predictDelivery(
  stat: TransitStat | undefined,
  pickupMs: number,
  offsetMin: number,
): PredictedDelivery | undefined {
  if (!stat || stat.transitCount < MIN_SAMPLES) return undefined;
  const at = (s: number) => pickupMs + s * 1000;
  const date = localDay(at(stat.transitP50), offsetMin);
  const earliest = localDay(nearestMidnight(stat, pickupMs, at(stat.transitP10), offsetMin, 0.1), offsetMin);
  const latest = localDay(nearestMidnight(stat, pickupMs, at(stat.transitP90), offsetMin, 0.9) - DAY_MS, offsetMin);
  return {
    date,
    earliest: earlierDay(earliest, date),
    latest: laterDay(latest, date),
    basis: stat.basis,
    sample_size: stat.transitCount,
  };
}

/** Seconds without a new checkpoint after which a shipment is stalled: the p95 scan gap, floor 24 h, default 72 h. */
export function stallThresholdS(stat: TransitStat | undefined): number {
  if (!stat || stat.gapCount < MIN_SAMPLES || stat.gapP95 === null) return STALL_DEFAULT_S;
  return Math.max(STALL_FLOOR_S, stat.gapP95);
}

/** Whole calendar days from `a` to `b` (`YYYY-MM-DD`). */
export const daysBetween = (a: string, b: string) =>
  Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);

/** The expected delivery day: the courier's EDD, else our predicted date; null when neither. */
export const effectiveEta = (courierEdd: string | null, predicted: string | null | undefined) =>
  courierEdd ?? predicted ?? null;

/** Whether an estimate moved by at least one calendar day; appearing or vanishing is not a move. */
export function etaChanged(previous: string | null, next: string | null): boolean {
  return previous !== null && next !== null && Math.abs(daysBetween(previous, next)) >= 1;
}
