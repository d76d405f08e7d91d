/**
 * Where the per-file test databases live: a tablespace on tmpfs (`/dev/shm`) when the PostgreSQL server runs on
 * this machine, else the server's default. On this machine a `CREATE DATABASE … TEMPLATE` of the migrated
 * template (529 files) cost 0.3–0.8 s of the server's CPU, nearly all of it in the kernel creating and syncing
 * files on ext4; into the tmpfs tablespace it costs 0.02 s. The data is a test file's, dropped when it ends, so
 * memory-backed storage loses nothing the tests check; the WAL stays in the server's data directory.
 *
 * TEST_PG_TABLESPACE_DIR names the folder (default /dev/shm/ct-test-pg); set it empty to use the default.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import type postgres from "postgres";

export const TEST_TABLESPACE = "ct_test_tmpfs";
const DIR = process.env.TEST_PG_TABLESPACE_DIR ?? "/dev/shm/ct-test-pg";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

let chosen: Promise<string | undefined> | undefined;

/**
 * The tablespace to create test databases in, or undefined for the server's default (a server elsewhere, no
 * /dev/shm, no superuser, or any failure setting it up: the copies are then as before, only slower).
 * Idempotent across the suite's processes: serialised by an advisory lock.
 */
export function testTablespace(admin: postgres.Sql, adminUrl: string): Promise<string | undefined> {
  chosen ??= setUp(admin, adminUrl).catch(() => undefined);
  return chosen;
}

async function setUp(admin: postgres.Sql, adminUrl: string): Promise<string | undefined> {
  if (!DIR || !LOOPBACK.has(new URL(adminUrl).hostname) || !existsSync("/dev/shm")) return undefined;
  // The folder must belong to the server's user, the owner of its data directory.
  const [{ setting }] = (await admin`select setting from pg_settings where name = 'data_directory'`) as unknown as [
    { setting: string },
  ];
  const owner = statSync(setting);
  await admin`select pg_advisory_lock(727003)`;
  try {
    mkdirSync(DIR, { recursive: true, mode: 0o700 });
    chownSync(DIR, owner.uid, owner.gid);
    const [found] = await admin`select pg_tablespace_location(oid) as location from pg_tablespace
      where spcname = ${TEST_TABLESPACE}`;
    // After a reboot the tablespace outlives its emptied folder: make it again (it holds only dropped copies).
    const usable = found?.location === DIR && readdirSync(DIR).some((f) => f.startsWith("PG_"));
    if (found && !usable) await admin.unsafe(`drop tablespace "${TEST_TABLESPACE}"`);
    if (!usable) await admin.unsafe(`create tablespace "${TEST_TABLESPACE}" location '${DIR.replaceAll("'", "''")}'`);
    return TEST_TABLESPACE;
  } finally {
    await admin`select pg_advisory_unlock(727003)`;
  }
}
