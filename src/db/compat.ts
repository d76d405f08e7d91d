/**
 * Expand and contract across a rolling deploy (docs/releases.md): the database records the oldest storage layout
 * a running process may still use, as a level. While it is below the level that moved a structure, this code
 * keeps writing the old structure too; `bun run admin contract` raises it once no older process runs.
 */
import { type Executor, initSetting, putSetting, readSetting } from "./settings.ts";

/** The `service_settings` row holding the oldest layout level a running process may use. */
const COMPAT_SETTING = "compat_level";
/** Release 1.0.0's layout: what a database migrated from it is assumed to still be served by, until contracted. */
export const FIRST_LEVEL = 1;
/**
 * This build's layout level. Raise it in the change that moves a structure (writing the old one while
 * `legacy(<new level>)` holds), and add the row to docs/releases.md, "Layout levels".
 */
export const COMPAT_LEVEL = 2;

/** The oldest layout level that may run against the database; unset: this build's (a database it created). */
export async function compatLevel(db: Executor): Promise<number> {
  const value = await readSetting(db, COMPAT_SETTING);
  return value === undefined ? COMPAT_LEVEL : Number(value);
}

/**
 * Records after migrating which layout may still run: a database migrated from an earlier release keeps
 * {@link FIRST_LEVEL} (or what it held); one this build created holds {@link COMPAT_LEVEL}.
 */
export async function recordCompatLevel(db: Executor, freshDatabase: boolean): Promise<void> {
  await initSetting(db, COMPAT_SETTING, String(freshDatabase ? COMPAT_LEVEL : FIRST_LEVEL));
}

/**
 * The contract step: no process older than this build runs any more. Raises the level to {@link COMPAT_LEVEL}
 * (never lowers it); returns the previous and new levels. @throws on DB errors
 */
export async function contract(db: Executor): Promise<{ from: number; to: number }> {
  const from = await compatLevel(db);
  const to = Math.max(from, COMPAT_LEVEL);
  await putSetting(db, COMPAT_SETTING, String(to));
  return { from, to };
}

/** A per-process view of {@link compatLevel}, read at most every `ttlMs` (default 30 s), for hot paths. */
export function compatView(db: Executor, now: () => number, ttlMs = 30_000) {
  let level: number | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  return {
    /** Whether a structure moved at layout `movedAt` must still be written the old way. @throws on DB errors */
    async legacy(movedAt: number): Promise<boolean> {
      if (level === undefined || now() - readAt >= ttlMs) {
        level = await compatLevel(db);
        readAt = now();
      }
      return level < movedAt;
    },
  };
}
