/**
 * `/status` and `/status/feed.atom` (docs/courier-health.md, "Status page"): public, no key, no account data, no
 * script; cacheable for a minute, and rendered at most once per {@link STATUS_TTL_MS} per process.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { HEALTH } from "../../domain/courier-health.ts";
import { emptyCounts, figuresOf } from "../../domain/courier-health.ts";
import { COURIERS } from "../couriers/catalogue.ts";
import { countsBetween, minuteOf } from "../courier-health/figures.ts";
import { healthRows, listIncidents, type IncidentView } from "../courier-health/read.ts";
import { DASHBOARD_CSP } from "./index.ts";
import { statusPage, type StatusCourier } from "./views/status.ts";
import { incidentFeed } from "./views/status-feed.ts";

/** How long a rendered page or feed is served again, ms (the figures change once a minute). */
export const STATUS_TTL_MS = 30_000;
const HOUR_MS = 3_600_000;
const CACHE_CONTROL = "public, max-age=60";

type StatusDeps = Pick<AppDeps, "db" | "clock" | "config">;

/** What the page shows, read at `nowMs`: every courier's state and 24 hourly slots, and 30 days of incidents. */
async function readStatus(
  deps: StatusDeps,
  nowMs: number,
): Promise<{ couriers: StatusCourier[]; incidents: IncidentView[] }> {
  const end = minuteOf(nowMs);
  const firstHour = Math.floor(end / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const [rows, hourly, day, incidents] = await Promise.all([
    healthRows(deps.db),
    countsBetween(deps.db, firstHour, end, { stepMs: HOUR_MS }),
    countsBetween(deps.db, end - 24 * HOUR_MS, end),
    listIncidents(deps.db, nowMs - HEALTH.retentionMs, 200),
  ]);
  const couriers = COURIERS.map((c) => {
    const row = rows.get(c.slug);
    return {
      slug: c.slug,
      name: c.name,
      state: row?.state ?? "unknown",
      since: row ? new Date(row.since).toISOString() : null,
      day: figuresOf(day.get(c.slug) ?? emptyCounts()),
      hours: Array.from({ length: 24 }, (_, i) => {
        const startMs = firstHour + i * HOUR_MS;
        return { startMs, figures: figuresOf(hourly.get(`${c.slug}|${startMs}`) ?? emptyCounts()) };
      }),
    } satisfies StatusCourier;
  });
  return { couriers, incidents };
}

function cached<T>(ttlMs: number, now: () => number, make: () => Promise<T>): () => Promise<T> {
  let last: { atMs: number; value: Promise<T> } | undefined;
  return () => {
    const t = now();
    if (!last || t - last.atMs >= ttlMs || t < last.atMs) {
      const value = make();
      last = { atMs: t, value };
      value.catch(() => (last = undefined));
    }
    return last.value;
  };
}

const headers = (type: string) => ({
  "content-type": type,
  "cache-control": CACHE_CONTROL,
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
});

/** The two public routes, outside the OpenAPI document (HTML and Atom, like the dashboard). */
export function statusPageModule(deps: StatusDeps) {
  const now = () => deps.clock.now();
  const page = cached(STATUS_TTL_MS, now, async () => {
    const at = now();
    const { couriers, incidents } = await readStatus(deps, at);
    return statusPage(couriers, incidents, at).value;
  });
  const feed = cached(STATUS_TTL_MS, now, async () => {
    const at = now();
    const incidents = await listIncidents(deps.db, at - HEALTH.retentionMs, 200);
    const names = new Map(COURIERS.map((c) => [c.slug, c.name]));
    return incidentFeed(incidents, names, deps.config.publicBaseUrl, at);
  });
  return new Elysia({ detail: { hide: true } })
    .get("/status", async () => new Response(await page(), { headers: headers("text/html; charset=utf-8") }), {
      detail: { hide: true },
    })
    .get(
      "/status/feed.atom",
      async () => new Response(await feed(), { headers: headers("application/atom+xml; charset=utf-8") }),
      { detail: { hide: true } },
    );
}
