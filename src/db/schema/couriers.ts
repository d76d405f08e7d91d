/** Courier rate budgets shared by every process, granted in ONE locking statement (docs/capacity.md#courier-rate-budgets). */
import { bigint, doublePrecision, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const courierBudgets = pgTable("courier_budgets", {
  /** `<adapter id>:<credential fingerprint>` (`:sandbox` for the simulator). */
  key: text("key").primaryKey(),
  /** The configured rate as the last process to take from the row saw it (for operators; each statement passes its own). */
  perSecond: doublePrecision("per_second").notNull(),
  /** Calls per UTC day; 0: no daily limit. */
  perDay: integer("per_day").notNull(),
  tokens: doublePrecision("tokens").notNull(),
  paceTokens: doublePrecision("pace_tokens").notNull(),
  /** When both buckets were last refilled, ms since the epoch (the latest clock any process brought). */
  refilledMs: bigint("refilled_ms", { mode: "number" }).notNull(),
  day: text("day").notNull(),
  dayUsed: integer("day_used").notNull().default(0),
  /** Followed shipments of the backend's couriers at `coverage_at` (scheduled re-checks only). */
  followed: integer("followed"),
  /** When `followed` was last counted; one process counts per interval for everyone. */
  coverageAt: timestamp("coverage_at", { withTimezone: true }),
});
