/** Reads of the stored health: one courier's state and figures, and the incidents (API, status page, feed). */
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { emptyCounts, figuresOf, HEALTH, type HealthState } from "../../domain/courier-health.ts";
import type { Courier } from "../couriers/catalogue.ts";
import { isoSecond } from "./event.ts";
import type { StoredFigures } from "./evaluate.ts";
import type { CourierHealthSchema, IncidentSchema } from "./model.ts";

export type CourierHealthView = typeof CourierHealthSchema.static;
export type IncidentView = typeof IncidentSchema.static;

interface IncidentRow {
  id: string;
  courier: string;
  state: "degraded" | "down";
  started_at: string | Date;
  ended_at: string | Date | null;
  transitions: IncidentView["transitions"];
}

const toIncident = (r: IncidentRow): IncidentView => ({
  id: r.id,
  courier: r.courier,
  state: r.state,
  started_at: isoSecond(r.started_at),
  ended_at: r.ended_at === null ? null : isoSecond(r.ended_at),
  transitions: r.transitions,
});

/** Incidents started at or after `sinceMs`, newest first, at most `limit`; one courier's when `courier` is given. */
export async function listIncidents(
  db: DbOrTx,
  sinceMs: number,
  limit: number,
  courier?: string,
): Promise<IncidentView[]> {
  const only = courier ? sql`and courier = ${courier}` : sql``;
  const rows = (await db.execute(sql`
    select id, courier, state, started_at, ended_at, transitions from courier_incidents
    where started_at >= ${new Date(sinceMs).toISOString()}::timestamptz ${only}
    order by started_at desc, id desc limit ${limit}`)) as unknown as IncidentRow[];
  return rows.map(toIncident);
}

interface HealthRow {
  courier: string;
  state: HealthState;
  since: string | Date;
  figures: StoredFigures;
  evaluated_at: string | Date;
  incident_id: string | null;
}

/** Every courier's stored row, by slug. */
export async function healthRows(db: DbOrTx): Promise<Map<string, HealthRow>> {
  const rows = (await db.execute(
    sql`select courier, state, since, figures, evaluated_at, incident_id from courier_health`,
  )) as unknown as HealthRow[];
  return new Map(rows.map((r) => [r.courier, r]));
}

/** One courier's health as `GET /v1/couriers/{slug}/health` shows it (unknown, empty figures, before any evaluation). */
export async function courierHealth(db: DbOrTx, courier: Courier): Promise<CourierHealthView> {
  const row = (await healthRows(db)).get(courier.slug);
  const empty = figuresOf(emptyCounts());
  const [incident] = row?.incident_id
    ? (
        (await db.execute(
          sql`select id, courier, state, started_at, ended_at, transitions from courier_incidents where id = ${row.incident_id}`,
        )) as unknown as IncidentRow[]
      ).map(toIncident)
    : [];
  const evaluatedMs = row ? new Date(row.evaluated_at).getTime() : null;
  const due = row?.figures.oldest_due_at ?? null;
  return {
    courier: courier.slug,
    name: courier.name,
    state: row?.state ?? "unknown",
    since: row ? isoSecond(row.since) : null,
    evaluated_at: evaluatedMs === null ? null : isoSecond(evaluatedMs),
    window_minutes: HEALTH.windowMs / 60_000,
    current: row?.figures.window ?? empty,
    windows: row?.figures.windows ?? { "15m": empty, "1h": empty, "24h": empty },
    baseline_p95_ms: row?.figures.baseline_p95_ms ?? null,
    oldest_due_recheck_age_s:
      due === null || evaluatedMs === null ? null : Math.max(0, Math.round((evaluatedMs - due) / 1000)),
    incident: incident ?? null,
  };
}
