/**
 * The path of an existing database into partitioned history (migration 0022, docs/capacity.md "Partitioned
 * history"): a database migrated to the previous migration and holding rows is migrated; every row is kept, the old
 * table becomes the partition (MINVALUE, next week boundary), reads and writes work, retention keeps pruning it row
 * by row and later drops it whole.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { loadConfig } from "../../src/configure.ts";
import { connect } from "../../src/db/client.ts";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/db/migrate.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { runHousekeeping } from "../../src/scheduler/housekeeping.ts";
import { ADMIN_URL } from "../helpers/db.ts";
import { testTablespace } from "../helpers/db-tablespace.ts";

const DAY = 86_400_000;
const name = `ct_t_mig_${Bun.randomUUIDv7().replaceAll("-", "").slice(-12)}`;
const url = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
})();
let sql: postgres.Sql;
let pool: ReturnType<typeof connect>;
const now = Date.now();

beforeAll(async () => {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  // In the test tablespace (tmpfs) where there is one, like every test database (test/helpers/db-tablespace.ts).
  const tablespace = await testTablespace(admin, ADMIN_URL);
  await admin.unsafe(`create database "${name}"${tablespace ? ` tablespace "${tablespace}"` : ""}`);
  await admin.end();
  // The migrations up to the one before partitioning.
  const dir = mkdtempSync(join(tmpdir(), "ct-mig-"));
  cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journal = JSON.parse(readFileSync(join(dir, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  const cut = journal.entries.findIndex((e) => e.tag === "0022_partitioned_history");
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(join(dir, "meta", "_journal.json"), JSON.stringify(journal));
  sql = postgres(url, { max: 4, onnotice: () => {} });
  await migrate(drizzle(sql), { migrationsFolder: dir });
  rmSync(dir, { recursive: true, force: true });

  // 40 days of history: 20,000 events, one outbox row each (the newest 10 pending, the rest delivered), attempts.
  const iso = (ms: number) => new Date(ms).toISOString();
  await sql`insert into accounts (id, email, plan) values ('acc_mig', 'mig@example.com', 'business')`;
  await sql`insert into webhooks (id, account_id, url, events, mode) values ('wh_mig', 'acc_mig', 'https://hooks.example.com/m', array['tracking.updated'], 'live')`;
  await sql`insert into shipments (id, courier, tracking_number) values ('shp_mig', 'delhivery', '12345678901')`;
  await sql`insert into events (id, shipment_id, type, status, enqueued_at, created_at)
    select 'evt_mig' || i, 'shp_mig', 'tracking.updated', 'in_transit', t, t
    from generate_series(1, 20000) i, lateral (select ${iso(now)}::timestamptz - (i * interval '172.8 seconds') as t) x`;
  await sql`insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
    select 'dlv_mig' || substr(id, 8), 'wh_mig', 'acc_mig', id, shipment_id, type, 'live',
           case when created_at > ${iso(now - 1_800_000)}::timestamptz then 'pending' else 'delivered' end, 1,
           case when created_at > ${iso(now - 1_800_000)}::timestamptz then created_at end, created_at, created_at, created_at
    from events`;
  await sql`insert into delivery_attempts (id, delivery_id, webhook_id, attempt, url, started_at, duration_ms, status_code)
    select 'att_mig' || substr(id, 8), id, 'wh_mig', 1, 'https://hooks.example.com/m', created_at, 5, 200 from deliveries`;
  await sql.end();
  await migrateDatabase(url);
  pool = connect(url, { max: 4 });
  sql = pool.sql;
});
afterAll(async () => {
  await pool?.sql.end({ timeout: 5 });
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

const count = async (t: string) => Number((await sql.unsafe(`select count(*)::int as n from ${t}`))[0]!.n);
const bound = async (part: string) =>
  (await sql`select pg_get_expr(relpartbound, oid) as b from pg_class where relname = ${part}`)[0]?.b as
    | string
    | undefined;

describe("migrating an existing database to partitioned history", () => {
  test("every row is kept and each old table is the partition from MINVALUE to the next week boundary", async () => {
    expect([
      await count("events"),
      await count("deliveries"),
      await count("delivery_attempts"),
      await count("delivery_queue"),
    ]).toEqual([20000, 20000, 20000, 10]);
    const cut = new Date(Math.floor((now - 4 * DAY) / (7 * DAY)) * 7 * DAY + 4 * DAY + 7 * DAY)
      .toISOString()
      .slice(0, 10);
    for (const t of ["events", "deliveries", "delivery_attempts"]) {
      expect((await sql`select relkind from pg_class where relname = ${t}`)[0]!.relkind).toBe("p");
      expect(await bound(`${t}_legacy`)).toStartWith(`FOR VALUES FROM (MINVALUE) TO ('${cut}`);
      expect(await bound(`${t}_p${cut.replaceAll("-", "")}`)).toStartWith(`FOR VALUES FROM ('${cut}`);
      expect(await bound(`${t}_default`)).toBe("DEFAULT");
    }
  });

  test("reads and writes work: by id, a new event, a duplicate key refused, a webhook removal follows its outbox rows", async () => {
    expect((await sql`select status from events where id = 'evt_mig7'`)[0]!.status).toBe("in_transit");
    await sql`insert into events (id, shipment_id, type, status, enqueued_at) values ('evt_mig_new', 'shp_mig', 'tracking.updated', 'delivered', now())`;
    const [row] = await sql`select tableoid::regclass::text as p, created_at from events where id = 'evt_mig_new'`;
    expect(row!.p).toBe("events_legacy");
    await expect(
      sql`insert into events (id, shipment_id, type, status, enqueued_at, created_at) values ('evt_mig_new', 'shp_mig', 'tracking.updated', 'delivered', now(), ${row!.created_at})`,
    ).rejects.toMatchObject({ code: "23505" });
    await sql`insert into webhooks (id, account_id, url, events, mode) values ('wh_gone', 'acc_mig', 'https://hooks.example.com/g', array['tracking.updated'], 'live')`;
    await sql`insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at)
      values ('dlv_gone', 'wh_gone', 'acc_mig', 'evt_mig_new', 'shp_mig', 'tracking.updated', 'live', 'pending', 0, now(), now())`;
    expect(await count("delivery_queue where delivery_id = 'dlv_gone'")).toBe(1);
    await sql`delete from webhooks where id = 'wh_gone'`;
    expect([
      await count("deliveries where id = 'dlv_gone'"),
      await count("delivery_queue where delivery_id = 'dlv_gone'"),
    ]).toEqual([0, 0]);
  });

  test("retention prunes the old table row by row while it holds the cutoff, then drops it whole", async () => {
    const deps = {
      db: pool.db,
      clock: new FakeClock(now),
      config: loadConfig({ RETENTION_DAYS: "30" }),
      log: silentLogger,
    };
    const r = await runHousekeeping(deps);
    expect(r.partitionsDropped).toEqual([]);
    // 40 days at one row per 172.8 s: the 10 days past retention go, the 30 days within it stay.
    expect(r.events).toBeGreaterThan(4900);
    expect(await count("events")).toBeGreaterThan(14900);
    expect(await count(`events where created_at < '${new Date(now - 30 * DAY).toISOString()}'`)).toBe(0);
    deps.clock.set(now + 45 * DAY);
    const later = await runHousekeeping(deps);
    expect(later.partitionsDropped).toContain("events_legacy");
    expect(later.partitionsDropped).toContain("delivery_attempts_legacy");
    // The outbox's old table still holds pending rows, so it stays until they are final and past retention.
    expect(later.partitionsDropped).not.toContain("deliveries_legacy");
    await sql`update deliveries set state = 'delivered', next_attempt_at = null where state = 'pending'`;
    expect((await runHousekeeping(deps)).partitionsDropped).toContain("deliveries_legacy");
    expect(await count("events")).toBe(0);
    expect(await count("deliveries")).toBe(0);
  });
});
