/** Applies the migrations at start; an advisory lock serialises replicas (drizzle's migrator does not lock). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { recordCompatLevel } from "./compat.ts";
import { databaseTls } from "./tls.ts";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));
const MIGRATION_LOCK = 727_001; // arbitrary, constant advisory-lock key for migrations

/** The newest migration's `when`, as drizzle records it in `created_at`. */
const MIGRATIONS_HEAD: number = Math.max(
  ...(
    JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
      entries: { when: number }[];
    }
  ).entries.map((e) => e.when),
);

/** True when the database carries every migration this build needs. @throws when it does not answer */
export async function migrationsAtHead(sql: postgres.Sql): Promise<boolean> {
  const rows = await sql`select max(created_at)::text as head from drizzle.__drizzle_migrations`.catch(
    (e: { code?: string }) => {
      if (e.code === "42P01" || e.code === "3F000") return [{ head: null }]; // never migrated
      throw e;
    },
  );
  const head = rows[0]?.head;
  return head != null && Number(head) >= MIGRATIONS_HEAD;
}

/** How many migrations the database has applied (0 for one never migrated). @throws when it does not answer */
async function appliedMigrations(sql: postgres.Sql): Promise<number> {
  const rows = await sql`select count(*)::int as n from drizzle.__drizzle_migrations`.catch((e: { code?: string }) => {
    if (e.code === "42P01" || e.code === "3F000") return [{ n: 0 }];
    throw e;
  });
  return Number(rows[0]?.n ?? 0);
}

/**
 * Migrates the database at `url` to the newest schema and records which layout may still run against it
 * (src/db/compat.ts: a database this build creates is this build's; one migrated from an earlier release is not).
 * Idempotent.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const tls = databaseTls(url);
  const sql = postgres(tls.url, { ssl: tls.ssl, max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    const fresh = (await appliedMigrations(sql)) === 0;
    const db = drizzle(sql);
    await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
    await recordCompatLevel(db, fresh);
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
