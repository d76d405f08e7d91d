/** Readiness: the database answers, migrations at head, not draining; one statement per probe. */
import type postgres from "postgres";
import { migrationsAtHead } from "../../db/migrate.ts";
import type { Lifecycle } from "./state.ts";

/** Why not ready, for the 503 message. */
export type NotReadyReason = "starting" | "draining" | "database_unreachable" | "migrations_behind";

export type Readiness = { ready: true } | { ready: false; reason: NotReadyReason };

/** Checks readiness; migrations are checked until seen at head (they never go back), the database on every call. */
export function createReadiness(sql: postgres.Sql, lifecycle: Lifecycle): () => Promise<Readiness> {
  let migrated = false;
  return async () => {
    if (lifecycle.draining) return { ready: false, reason: "draining" };
    if (lifecycle.starting) return { ready: false, reason: "starting" };
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const check = migrated ? sql`select 1`.then(() => true) : migrationsAtHead(sql);
      // The probe answers within READINESS_TIMEOUT_MS whatever the database does; the statement itself is bounded
      // by the pool's deadlines (db/client.ts) and its late failure is dropped here.
      check.catch(() => undefined);
      const late = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error("readiness check timed out")), READINESS_TIMEOUT_MS)),
      );
      migrated = await Promise.race([check, late]);
    } catch {
      return { ready: false, reason: "database_unreachable" };
    } finally {
      clearTimeout(timer);
    }
    return migrated ? { ready: true } : { ready: false, reason: "migrations_behind" };
  };
}

/** Longest a readiness probe waits for the database before it answers 503, ms. */
const READINESS_TIMEOUT_MS = 2_000;

export const READINESS_MESSAGE: Record<NotReadyReason, string> = {
  starting: "Not ready: the process is still starting.",
  draining: "Not ready: the process is shutting down.",
  database_unreachable: "Not ready: the database does not answer.",
  migrations_behind: "Not ready: the database schema is behind this version (run the migrations).",
};
