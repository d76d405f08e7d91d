/**
 * Applies the committed drizzle-kit migrations in `drizzle/` at start.
 *
 * Several replicas may start at once, and drizzle's migrator does not lock:
 * a session-level advisory lock on one dedicated connection serialises them,
 * so the second replica finds the journal up to date and does nothing.
 */
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));
const MIGRATION_LOCK = 727_001; // arbitrary, constant advisory-lock key for migrations

/** Migrates the database at `url` to the newest schema. Idempotent. */
export async function migrateDatabase(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
