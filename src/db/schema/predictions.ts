/** Transit statistics per courier × basis × key, rebuilt daily (docs/predictions.md#transit-statistics). */
import { doublePrecision, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const transitStats = pgTable(
  "transit_stats",
  {
    courier: text("courier").notNull(),
    /** `lane` (origin → destination city), `region` (destination region) or `courier` (courier-wide). */
    basis: text("basis").notNull(),
    /** Normalised origin city for `lane`, else "". */
    origin: text("origin").notNull(),
    /** Normalised destination city (`lane`) or region (`region`), "" for `courier`. */
    destination: text("destination").notNull(),
    /** Pickup-to-delivery time percentiles (p05 … p95), seconds, over `transit_count` deliveries. */
    transitP05: doublePrecision("transit_p05").notNull(),
    transitP10: doublePrecision("transit_p10").notNull(),
    transitP25: doublePrecision("transit_p25").notNull(),
    transitP50: doublePrecision("transit_p50").notNull(),
    transitP75: doublePrecision("transit_p75").notNull(),
    transitP90: doublePrecision("transit_p90").notNull(),
    transitP95: doublePrecision("transit_p95").notNull(),
    transitCount: integer("transit_count").notNull(),
    /** Gap between consecutive scans, seconds, over `gap_count` gaps; null without any gap. */
    gapP50: doublePrecision("gap_p50"),
    gapP90: doublePrecision("gap_p90"),
    gapP95: doublePrecision("gap_p95"),
    gapCount: integer("gap_count").notNull(),
    rebuiltAt: timestamp("rebuilt_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.courier, t.basis, t.origin, t.destination] })],
);
