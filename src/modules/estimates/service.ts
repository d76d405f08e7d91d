/** `GET /v1/estimates` from the transit statistics alone: no courier call, no quota (docs/predictions.md, "Estimates"). */
import { compareEstimates, IST_OFFSET_MIN, type Estimate } from "../../domain/estimates.ts";
import { addDays } from "../../domain/holidays.ts";
import { parsePlace, type Place } from "../../domain/places.ts";
import { localDay } from "../../domain/predictions.ts";
import { RequestValidationError, type ValidationItem } from "../../lib/errors.ts";
import { COURIERS } from "../couriers/catalogue.ts";
import { requireCourier } from "../couriers/service.ts";
import type { StatsIndex } from "../predictions/stats.ts";

/** How far ahead a ship date may be, days: the holiday list's reach (src/domain/holidays.ts). */
const MAX_SHIP_AHEAD_DAYS = 60;

export interface EstimateInput {
  origin: string;
  destination: string;
  courier?: string;
  ship_date?: string;
}

const placeView = (p: Place) => ({ kind: p.kind, value: p.kind === "pincode" ? p.pincode : p.city });

const isCalendarDay = (s: string) => {
  const ms = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === s;
};

/**
 * The ranked estimates between two places, as the `data` of the answer.
 * @throws RequestValidationError (422) for a place that is neither a PIN nor a city, or a ship date that is no
 *   calendar day or is outside today … today + {@link MAX_SHIP_AHEAD_DAYS} (India); AppError COURIER_NOT_FOUND (404).
 */
export function estimatesBetween(index: StatsIndex, input: EstimateInput, nowMs: number) {
  const problems: ValidationItem[] = [];
  const place = (field: "origin" | "destination") => {
    const p = parsePlace(input[field]);
    if (!p)
      problems.push({
        loc: ["query", field],
        msg: "Should be an Indian 6-digit PIN (first digit 1-9) or a city name (letters, spaces, . ' -)",
        type: "value_error",
      });
    return p;
  };
  const origin = place("origin");
  const destination = place("destination");
  const today = localDay(nowMs, IST_OFFSET_MIN);
  const shipDate = input.ship_date ?? today;
  if (!isCalendarDay(shipDate) || shipDate < today || shipDate > addDays(today, MAX_SHIP_AHEAD_DAYS))
    problems.push({
      loc: ["query", "ship_date"],
      msg: `Should be a calendar day from ${today} to ${addDays(today, MAX_SHIP_AHEAD_DAYS)} (YYYY-MM-DD, India)`,
      type: "value_error",
    });
  if (problems.length > 0 || !origin || !destination) throw new RequestValidationError(problems);
  const known = new Set(COURIERS.map((c) => c.slug));
  const slugs = input.courier
    ? [requireCourier(input.courier.trim().toLowerCase()).slug]
    : index.couriersWithHistory().filter((s) => known.has(s));
  const estimates: (Estimate & { courier: string })[] = [];
  for (const courier of slugs) {
    const e = index.estimate(courier, origin, destination, shipDate);
    if (e) estimates.push({ courier, ...e });
  }
  estimates.sort((a, b) => compareEstimates(a, b) || a.courier.localeCompare(b.courier));
  return {
    origin: placeView(origin),
    destination: placeView(destination),
    ship_date: shipDate,
    estimates: estimates.map((e) => ({
      courier: e.courier,
      date: e.date,
      earliest: e.earliest,
      latest: e.latest,
      pickup_date: e.pickup_date,
      basis: e.basis,
      sample_size: e.sample_size,
    })),
    count: estimates.length,
    ...(estimates.length === 0 ? { reason: "not_enough_history" as const } : {}),
  };
}
