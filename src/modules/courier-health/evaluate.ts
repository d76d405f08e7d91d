/**
 * The per-minute evaluation (docs/courier-health.md, "States"): one process at a time (a transaction-scoped advisory
 * lock, and at most once per minute), so replicas on one database agree and each transition sends one event.
 */
import { sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client.ts";
import { COURIERS } from "../couriers/catalogue.ts";
import {
  conditionLevel,
  emptyCounts,
  figuresOf,
  HEALTH,
  initialMemory,
  nextHealth,
  type CourierEventType,
  type HealthMemory,
  type HealthState,
  type WindowFigures,
} from "../../domain/courier-health.ts";
import { newId } from "../../lib/ids.ts";
import { isoSecond, type CourierEventData, type CourierEventSink } from "./event.ts";
import { baselines, countsBetween, minuteOf, oldestDue, windowFigures, type WindowName } from "./figures.ts";

/** The advisory lock key of the evaluation (arbitrary, constant, like the migration lock's). */
const HEALTH_LOCK = 727_043;
const HOUR_MS = 3_600_000;

/** What one courier's row holds besides its state. */
export interface StoredFigures {
  /** The evaluation window's figures (the ones the thresholds read). */
  window: WindowFigures;
  windows: Record<WindowName, WindowFigures>;
  baseline_p95_ms: number | null;
  baseline_at: number;
  oldest_due_at: number | null;
}

export interface Transition {
  courier: string;
  from: HealthState;
  to: HealthState;
  event: CourierEventType;
  eventId: string;
  incidentId: string;
}

interface Row {
  courier: string;
  state: HealthState;
  memory: HealthMemory;
  figures: StoredFigures;
  evaluated_at: string | Date;
  incident_id: string | null;
}

/**
 * Evaluates every courier at `nowMs` unless another process holds the lock or evaluated this minute already.
 * @returns the transitions made (their events are in the outbox when this resolves); null when skipped
 * @throws the database's errors (the scheduler logs them and backs off)
 */
export async function evaluateHealth(db: Db, nowMs: number, sink: CourierEventSink): Promise<Transition[] | null> {
  const minute = minuteOf(nowMs);
  return db.transaction(async (tx) => {
    const [lock] = (await tx.execute(sql`select pg_try_advisory_xact_lock(${HEALTH_LOCK}) as got`)) as unknown as {
      got: boolean;
    }[];
    if (!lock?.got) return null;
    const rows = (await tx.execute(
      sql`select courier, state, memory, figures, evaluated_at, incident_id from courier_health`,
    )) as unknown as Row[];
    const byCourier = new Map(rows.map((r) => [r.courier, r]));
    if (rows.length > 0 && rows.every((r) => new Date(r.evaluated_at).getTime() >= minute)) return null;
    const [current, windows, due] = await Promise.all([
      countsBetween(tx, minute - HEALTH.windowMs, minute),
      windowFigures(tx, nowMs),
      oldestDue(tx, nowMs),
    ]);
    const stale = rows.length === 0 || rows.some((r) => nowMs - (r.figures?.baseline_at ?? 0) >= HOUR_MS);
    const base = stale ? await baselines(tx, nowMs) : undefined;
    const out: Transition[] = [];
    for (const c of COURIERS) {
      const prev = byCourier.get(c.slug);
      const window = figuresOf(current.get(c.slug) ?? emptyCounts());
      const baseline = base ? (base.get(c.slug) ?? null) : (prev?.figures.baseline_p95_ms ?? null);
      const figures: StoredFigures = {
        window,
        windows: windows.get(c.slug) ?? emptyWindows(),
        baseline_p95_ms: baseline,
        baseline_at: base ? nowMs : (prev?.figures.baseline_at ?? nowMs),
        oldest_due_at: due.get(c.slug) ?? null,
      };
      const { memory, event } = nextHealth(
        prev?.memory ?? initialMemory(nowMs),
        conditionLevel(window, baseline),
        nowMs,
      );
      let incidentId = prev?.incident_id ?? null;
      if (event) {
        const t = await transition(
          tx,
          sink,
          c.slug,
          prev?.state ?? "unknown",
          memory,
          event,
          figures,
          incidentId,
          nowMs,
        );
        out.push(t);
        incidentId = t.to === "operational" ? null : t.incidentId;
      }
      await tx.execute(sql`
        insert into courier_health (courier, state, since, memory, figures, evaluated_at, incident_id)
        values (${c.slug}, ${memory.state}, ${new Date(memory.sinceMs).toISOString()}::timestamptz, ${JSON.stringify(memory)}::jsonb,
          ${JSON.stringify(figures)}::jsonb, ${new Date(nowMs).toISOString()}::timestamptz, ${incidentId})
        on conflict (courier) do update set state = excluded.state, since = excluded.since, memory = excluded.memory,
          figures = excluded.figures, evaluated_at = excluded.evaluated_at, incident_id = excluded.incident_id`);
    }
    return out;
  });
}

function emptyWindows(): Record<WindowName, WindowFigures> {
  const f = figuresOf(emptyCounts());
  return { "15m": f, "1h": f, "24h": f };
}

/** Opens, updates or closes the incident and puts the event into the outbox, in the evaluation's transaction. */
async function transition(
  tx: Tx,
  sink: CourierEventSink,
  courier: string,
  from: HealthState,
  memory: HealthMemory,
  event: CourierEventType,
  figures: StoredFigures,
  openId: string | null,
  nowMs: number,
): Promise<Transition> {
  const eventId = newId("evt");
  const at = new Date(Math.floor(nowMs / 1000) * 1000);
  const incidentId = openId ?? newId("inc");
  const step = { at: isoSecond(at), state: memory.state, event, event_id: eventId, figures: figures.window };
  if (openId === null)
    await tx.execute(sql`
      insert into courier_incidents (id, courier, state, started_at, transitions)
      values (${incidentId}, ${courier}, ${memory.state}, ${at.toISOString()}::timestamptz, ${JSON.stringify([step])}::jsonb)`);
  else
    await tx.execute(sql`
      update courier_incidents set transitions = transitions || ${JSON.stringify([step])}::jsonb,
        state = case when ${memory.state} = 'down' then 'down' else state end,
        ended_at = case when ${memory.state} = 'operational' then ${at.toISOString()}::timestamptz else ended_at end
      where id = ${incidentId}`);
  const data: CourierEventData = {
    courier,
    courier_name: COURIERS.find((c) => c.slug === courier)?.name ?? courier,
    state: memory.state as CourierEventData["state"],
    previous_state: from,
    since: isoSecond(at),
    incident_id: incidentId,
    window_minutes: HEALTH.windowMs / 60_000,
    figures: figures.window,
    baseline_p95_ms: figures.baseline_p95_ms,
    enqueued_at: isoSecond(at),
  };
  await sink(tx, { eventId, type: event, enqueuedAt: at, data });
  return { courier, from, to: memory.state, event, eventId, incidentId };
}
