/** Courier health (docs/courier-health.md): per-minute call buckets from every process, states, incidents. */
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/** One courier's calls in one minute, summed over processes (each adds its counts once a minute). */
export const courierCallBuckets = pgTable(
  "courier_call_buckets",
  {
    courier: text("courier").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    calls: integer("calls").notNull().default(0),
    /** Calls by kind, in the order of CALL_KINDS (src/domain/courier-health.ts). */
    kinds: integer("kinds").array().notNull(),
    /** Calls per latency bucket (LATENCY_BUCKETS_MS, plus the overflow bucket). */
    latency: integer("latency").array().notNull(),
    latencySumMs: bigint("latency_sum_ms", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "courier_call_buckets_pkey", columns: [t.courier, t.minute] }),
    index("courier_call_buckets_minute_idx").on(t.minute),
  ],
);

/** Each courier's state and what the state machine remembers (HealthMemory), written by one evaluator at a time. */
export const courierHealth = pgTable("courier_health", {
  courier: text("courier").primaryKey(),
  state: text("state").notNull(),
  since: timestamp("since", { withTimezone: true }).notNull(),
  memory: jsonb("memory").notNull(),
  /** The figures of the last evaluation (windows, baseline, oldest due re-check). */
  figures: jsonb("figures").notNull(),
  evaluatedAt: timestamp("evaluated_at", { withTimezone: true }).notNull(),
  /** The open incident, if any. */
  incidentId: text("incident_id"),
});

/** A time a courier was degraded or down: from the first event to `courier.recovered`. */
export const courierIncidents = pgTable(
  "courier_incidents",
  {
    id: text("id").primaryKey(),
    courier: text("courier").notNull(),
    /** The worst state reached: `degraded` | `down`. */
    state: text("state").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
    /** Each transition: `{ at, state, event, event_id, figures }`. */
    transitions: jsonb("transitions").notNull(),
  },
  (t) => [index("courier_incidents_started_idx").on(t.startedAt)],
);
