/**
 * The pre-purchase delivery estimate (docs/predictions.md, "Estimates"): a transit distribution read from the
 * ship date, on a clock that stops on the courier's non-working days (Sundays and holidays, `holidays.ts`).
 */
import { earlierDay, laterDay } from "./dates.ts";
import { isWorkingDay, nextWorkingDay } from "./holidays.ts";
import { localDay, MIN_SAMPLES, type Basis, type TransitStat } from "./predictions.ts";

/** India Standard Time, minutes east of UTC: every estimate is for an Indian origin and destination. */
export const IST_OFFSET_MIN = 330;
/** The pickup is taken at local noon of the (working) ship date, the middle of a courier's pickup day. */
const PICKUP_LOCAL_MS = 12 * 3_600_000;
/** History counts Sundays at their weekly rate; the clock here skips them, so it runs 6/7 of the elapsed time. */
const WORKING_SHARE = 6 / 7;
const DAY_MS = 86_400_000;

export interface Estimate {
  /** `YYYY-MM-DD`, local: the median delivery day, and the p10–p90 window around it. */
  date: string;
  earliest: string;
  latest: string;
  basis: Basis;
  sample_size: number;
  /** The day the courier is taken to pick up: the ship date, or the next working day after it. */
  pickup_date: string;
}

/** The local day reached `elapsedS` seconds of history after local-midnight-based `startLocalMs`, non-working days skipped. */
function advanceWorking(startLocalMs: number, elapsedS: number): string {
  let rest = Math.max(0, elapsedS) * 1000 * WORKING_SHARE;
  let at = startLocalMs;
  for (;;) {
    const day = localDay(at, 0);
    const midnight = (Math.floor(at / DAY_MS) + 1) * DAY_MS;
    if (!isWorkingDay(day)) at = midnight;
    else if (at + rest < midnight) return day;
    else {
      rest -= midnight - at;
      at = midnight;
    }
  }
}

/**
 * The estimate for a shipment handed over on `shipDate` (`YYYY-MM-DD`, local): undefined under {@link MIN_SAMPLES}.
 * Each quantile (p10, p50, p90) runs from noon of the pickup day on the working clock.
 */
export function estimateDelivery(stat: TransitStat | undefined, shipDate: string): Estimate | undefined {
  if (!stat || stat.transitCount < MIN_SAMPLES) return undefined;
  const pickup = nextWorkingDay(shipDate);
  const start = Date.parse(`${pickup}T00:00:00Z`) + PICKUP_LOCAL_MS;
  const date = advanceWorking(start, stat.transitP50);
  const earliest = advanceWorking(start, stat.transitP10);
  const latest = advanceWorking(start, stat.transitP90);
  return {
    date,
    earliest: earlierDay(earliest, date),
    latest: laterDay(latest, date),
    basis: stat.basis,
    sample_size: stat.transitCount,
    pickup_date: pickup,
  };
}

/** Ranking of estimates: earliest median day, then the narrower window's end, then more samples. */
export function compareEstimates(a: Estimate, b: Estimate): number {
  return a.date.localeCompare(b.date) || a.latest.localeCompare(b.latest) || b.sample_size - a.sample_size;
}
