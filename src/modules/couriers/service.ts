/** Courier lookup with `did_you_mean` for near misses (spec-map Decisions: Unnamed errors): one clear best candidate. */
import { ACTION_NAMES } from "../../domain/actions.ts";
import { AppError } from "../../lib/errors.ts";
import { COURIERS, courierBySlug, type Courier } from "./catalogue.ts";
import type { CourierBackends } from "./registry.ts";
import type { HealthSummarySchema } from "./model.ts";

export type HealthSummary = typeof HealthSummarySchema.static;
/** A courier's health summary by slug (the courier health module's cache, wired by app.ts). */
export type HealthOf = (slug: string) => HealthSummary;
const NO_HEALTH: HealthSummary = { state: "unknown", since: null, success_share_15m: null, p95_ms_15m: null };

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");

/** Levenshtein distance, capped: returns `max + 1` as soon as it is exceeded. */
function editDistance(a: string, b: string, max = 3): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

/** The one slug `input` clearly means, or undefined. */
export function suggestSlug(input: string): string | undefined {
  const q = squash(input);
  if (q.length < 2) return undefined;
  const exact = COURIERS.filter((c) => c.slug === q || squash(c.name) === q);
  if (exact.length === 1) return exact[0]?.slug;
  const prefix = COURIERS.filter(
    (c) => q.length >= 3 && (c.slug.startsWith(q) || squash(c.name).startsWith(q) || q.startsWith(c.slug)),
  );
  if (prefix.length === 1) return prefix[0]?.slug;
  const budget = q.length <= 4 ? 1 : 2;
  let best: Courier[] = [];
  let bestD = budget + 1;
  for (const c of COURIERS) {
    const d = Math.min(editDistance(q, c.slug, budget), editDistance(q, squash(c.name), budget));
    if (d < bestD) [best, bestD] = [[c], d];
    else if (d === bestD) best.push(c);
  }
  return best.length === 1 ? best[0]?.slug : undefined;
}

/** Resolves a slug. @throws AppError COURIER_NOT_FOUND (404), with `did_you_mean` when one slug is clearly meant */
export function requireCourier(slug: string): Courier {
  const c = courierBySlug(slug);
  if (c) return c;
  const hint = suggestSlug(slug);
  const shown = JSON.stringify(slug.length > 40 ? `${slug.slice(0, 40)}…` : slug);
  throw new AppError(
    "COURIER_NOT_FOUND",
    `Unknown courier ${shown}.${hint ? ` Did you mean "${hint}"?` : ""} GET /v1/couriers lists the supported slugs.`,
    hint ? { did_you_mean: hint } : {},
  );
}

/** A courier as the API shows it; `available`, `sandbox` and `rate_budget` come from the running backends (registry.ts). */
export const courierView = (
  c: Courier,
  backends: Pick<CourierBackends, "availability" | "budget"> & Partial<Pick<CourierBackends, "actionRules">>,
  healthOf?: HealthOf,
) => {
  const a = backends.availability(c);
  return {
    slug: c.slug,
    name: c.name,
    available: a !== "unavailable",
    sandbox: a === "sandbox",
    actions: ACTION_NAMES.filter((n) => backends.actionRules?.(c)?.[n]),
    rate_budget: backends.budget(c),
    health: healthOf?.(c.slug) ?? NO_HEALTH,
  };
};
