/**
 * Migration 0010 moves the re-check schedule out of `shipments` into `recheck_queue` (docs/rechecks.md): a
 * database that already holds shipments keeps every schedule — due time, lease and failure count — and only
 * the scheduled shipments get a queue row. The database is migrated to 0009 from a copy of the journal cut
 * there, filled, then migrated to the newest schema as a deployment would.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/db/migrate.ts";
import { ADMIN_URL } from "../helpers/db.ts";
import { testTablespace } from "../helpers/db-tablespace.ts";

const name = `ct_m_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
const url = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
})();
const before0010 = mkdtempSync(join(tmpdir(), "ct-migrations-"));

beforeAll(async () => {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
    entries: { idx: number; tag: string }[];
  };
  journal.entries = journal.entries.filter((e) => e.idx < 10);
  mkdirSync(join(before0010, "meta"));
  writeFileSync(join(before0010, "meta", "_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries)
    copyFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), join(before0010, `${e.tag}.sql`));
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  // In the test tablespace (tmpfs) where there is one, like every test database (test/helpers/db-tablespace.ts).
  const tablespace = await testTablespace(admin, ADMIN_URL);
  await admin.unsafe(`create database "${name}"${tablespace ? ` tablespace "${tablespace}"` : ""}`);
  await admin.end({ timeout: 5 });
});
afterAll(async () => {
  rmSync(before0010, { recursive: true, force: true });
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end({ timeout: 5 });
});

test("a populated pre-0010 database keeps every schedule, lease and failure count in recheck_queue; unscheduled shipments get no row", async () => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle(sql), { migrationsFolder: before0010 });
    await sql`
      insert into shipments (id, courier, tracking_number, state, terminal, followers, next_check_at, lease_until, lease_owner, recheck_failures) values
        ('shp_due', 'delhivery', '1234567890111', 'in_transit', false, 2, '2026-11-05T16:00:00Z', null, null, 0),
        ('shp_backed_off', 'bluedart', '1234567891', 'in_transit', false, 1, '2026-11-05T17:30:00Z', null, null, 3),
        ('shp_leased', 'dhl', '1234567891', 'pending', false, 1, '2026-11-05T15:00:00Z', '2026-11-05T15:05:00Z', 'host:42:abcd', 1),
        ('shp_delivered', 'delhivery', '1234567890121', 'delivered', true, 1, null, null, null, 0),
        ('shp_unfollowed', 'delhivery', '1234567890131', 'in_transit', false, 0, null, null, null, 0)`;
  } finally {
    await sql.end({ timeout: 5 });
  }

  await migrateDatabase(url);

  const after = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await after`
      select shipment_id, courier, tracking_number, to_json(due_at)#>>'{}' as due_at, to_json(lease_until)#>>'{}' as lease_until, lease_owner, failures
      from recheck_queue order by shipment_id`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      {
        shipment_id: "shp_backed_off",
        courier: "bluedart",
        tracking_number: "1234567891",
        due_at: "2026-11-05T17:30:00+00:00",
        lease_until: null,
        lease_owner: null,
        failures: 3,
      },
      {
        shipment_id: "shp_due",
        courier: "delhivery",
        tracking_number: "1234567890111",
        due_at: "2026-11-05T16:00:00+00:00",
        lease_until: null,
        lease_owner: null,
        failures: 0,
      },
      {
        shipment_id: "shp_leased",
        courier: "dhl",
        tracking_number: "1234567891",
        due_at: "2026-11-05T15:00:00+00:00",
        lease_until: "2026-11-05T15:05:00+00:00",
        lease_owner: "host:42:abcd",
        failures: 1,
      },
    ]);
    // Additive: the previous version's columns and indexes stay, so its processes keep working during a rolling
    // upgrade: its claim and its record statements still run on the migrated database.
    const [kept] = await after`
      select count(*)::int as n from information_schema.columns
      where table_name = 'shipments' and column_name in ('next_check_at', 'lease_until', 'lease_owner', 'recheck_failures')`;
    expect(kept!.n).toBe(4);
    expect(
      await after`select indexname from pg_indexes where indexname in ('shipments_due_idx', 'shipments_due_bucket_idx')`,
    ).toHaveLength(2);
    const claimed = await after`
      update shipments set lease_until = now() + interval '5 minutes', lease_owner = 'old:1:x'
      where id = any(array(select id from shipments where next_check_at is not null and (lease_until is null or lease_until <= now()) order by next_check_at limit 10 for update skip locked))
      returning id`;
    expect(claimed.length).toBeGreaterThan(0);
    await after`update shipments set recheck_failures = recheck_failures + 1, next_check_at = now(), lease_until = null, lease_owner = null where id = 'shp_due'`;
    // The queue row goes with its shipment.
    await after`delete from shipments where id = 'shp_due'`;
    expect((await after`select shipment_id from recheck_queue order by shipment_id`).map((r) => r.shipment_id)).toEqual(
      ["shp_backed_off", "shp_leased"],
    );
  } finally {
    await after.end({ timeout: 5 });
  }
});
