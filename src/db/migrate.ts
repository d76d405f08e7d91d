/** Applies the migrations at start; an advisory lock serialises replicas (drizzle's migrator does not lock). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { databaseTls } from "./tls.ts";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));
const MIGRATION_LOCK = 727_001; // arbitrary, constant advisory-lock key for migrations

/** The newest migration's `when`, as drizzle records it in `created_at`. */
export const MIGRATIONS_HEAD: number = Math.max(
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

/** Migrates the database at `url` to the newest schema. Idempotent. */
export async function migrateDatabase(url: string): Promise<void> {
  const tls = databaseTls(url);
  const sql = postgres(tls.url, { ssl: tls.ssl, max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
