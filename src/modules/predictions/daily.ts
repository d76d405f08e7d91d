/** The scheduler's daily rebuild of the transit statistics (docs/predictions.md#rebuild); every replica runs it. */
import { max } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { transitStats } from "../../db/schema/index.ts";
import { rebuildTransitStats, type RebuildResult } from "./rebuild.ts";
import type { TransitStatsCache } from "./stats.ts";

/** Statistics younger than this are not rebuilt by the daily job, ms. */
const REBUILD_MIN_AGE_MS = 20 * 3_600_000;

/**
 * Rebuilds `transit_stats` unless another replica did within {@link REBUILD_MIN_AGE_MS}; null when skipped.
 * @throws whatever the database throws (the scheduler logs and backs off).
 */
export async function rebuildIfDue(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  stats: TransitStatsCache;
}): Promise<RebuildResult | null> {
  const nowMs = deps.clock.now();
  const [last] = await deps.db.select({ at: max(transitStats.rebuiltAt) }).from(transitStats);
  if (last?.at && nowMs - last.at.getTime() < REBUILD_MIN_AGE_MS) return null;
  const result = await rebuildTransitStats(deps.db, nowMs);
  deps.stats.invalidate();
  deps.log.info("transit statistics rebuilt", { component: "predictions", ...result });
  return result;
}
