/**
 * Courier rate budgets shared by every process of a deployment (src/modules/couriers/budget.ts;
 * docs/capacity.md, "Courier rate budgets"): one row per courier backend and credential, a token bucket
 * refilled at `per_second`, a pace bucket for re-checks, and the UTC day's call count against `per_day`.
 * Every grant is ONE statement that locks the row, refills by the elapsed time and takes what it may.
 */
import { bigint, doublePrecision, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const courierBudgets = pgTable("courier_budgets", {
  /** `<adapter id>:<credential fingerprint>` (`:sandbox` for the simulator). */
  key: text("key").primaryKey(),
  /** The configured rate as the last process to take from the row saw it (for operators; each statement passes its own). */
  perSecond: doublePrecision("per_second").notNull(),
  /** Calls per UTC day; 0: no daily limit. */
  perDay: integer("per_day").notNull(),
  /** Tokens in the shared bucket at `refilled_ms`. */
  tokens: doublePrecision("tokens").notNull(),
  /** Tokens in the re-checks' pace bucket at `refilled_ms`. */
  paceTokens: doublePrecision("pace_tokens").notNull(),
  /** When both buckets were last refilled, ms since the epoch (the latest clock any process brought). */
  refilledMs: bigint("refilled_ms", { mode: "number" }).notNull(),
  /** The UTC day (`YYYY-MM-DD`) `day_used` counts. */
  day: text("day").notNull(),
  dayUsed: integer("day_used").notNull().default(0),
  /** Followed shipments of the backend's couriers at `coverage_at` (scheduled re-checks only). */
  followed: integer("followed"),
  /** When `followed` was last counted; one process counts per interval for everyone. */
  coverageAt: timestamp("coverage_at", { withTimezone: true }),
});
