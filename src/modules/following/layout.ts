/**
 * Which layout this database runs on (docs/releases.md, "Layout levels"): below level 2, 1.0.0's re-check schedule
 * (`recheck_queue`, `shipments.last_checked_at`) and its whole-list history (`shipments.checkpoints`) are written too.
 */
import type { Db } from "../../db/client.ts";
import { compatView } from "../../db/compat.ts";

/** The layout level that moved the schedule to `recheck_schedule` (check time off `shipments`) and the history to a tail and sealed chunks. */
export const SCHEDULE_LEVEL = 2;

type View = ReturnType<typeof compatView>;
const views = new WeakMap<object, View>();

/**
 * Whether `db` still runs the 1.0.0 layout (a migrated database not yet contracted): then the old structures
 * are written as 1.0.0 wrote them. Read at most every 30 s per pool. @throws on DB errors
 */
export function legacyLayout(db: Db): Promise<boolean> {
  let v = views.get(db.$client);
  if (!v) {
    v = compatView(db, () => performance.now());
    views.set(db.$client, v);
  }
  return v.legacy(SCHEDULE_LEVEL);
}

/** Forgets the level read for `db`'s pool, so the next call reads it again (after `admin contract` in this process). */
export function forgetScheduleLayout(db: Db): void {
  views.delete(db.$client);
}

/** SQL for "this database is contracted to level 2" (for statements that take no pool: a transaction's). */
export const CONTRACTED_SQL = `coalesce((select value::int from service_settings where name = 'compat_level'), ${SCHEDULE_LEVEL}) >= ${SCHEDULE_LEVEL}`;
