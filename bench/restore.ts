/**
 * `bun run bench:restore [--shipments 100000]` — the restore time behind docs/operations/backup-restore.md (RTO):
 * the 1.0.0 upgrade fixture, migrated, grown in SQL to N followed shipments (the fixture's 6-checkpoint history
 * each), 3 events per shipment and a pending delivery per 100; then `pg_dump --format=custom`, and
 * `pg_restore --jobs 2` into a new database, each timed, with the sizes. Needs pg_dump and pg_restore.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { migrateDatabase } from "../src/db/migrate.ts";
import { previousRelease, restoreFixture } from "../test/upgrade/support.ts";
import { ADMIN_URL } from "../test/helpers/db.ts";

const { values } = parseArgs({ options: { shipments: { type: "string", default: "100000" } } });
const n = Number(values.shipments);
const seconds = (t0: number) => Math.round((performance.now() - t0) / 100) / 10;

const source = await restoreFixture(previousRelease());
await migrateDatabase(source.url);
const work = mkdtempSync(join(tmpdir(), "ct-bench-restore-"));
const target = `ct_bench_rs_${Date.now()}`;
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
try {
  let t0 = performance.now();
  const sql = source.sql;
  const [{ acc, wh }] = (await sql`select w.account_id as acc, w.id as wh from webhooks w
                                    where w.mode = 'live' order by w.id limit 1`) as unknown as [
    { acc: string; wh: string },
  ];
  await sql`insert into shipments (id, courier, tracking_number, state, most_recent_status, checkpoints, last_checked_at)
            select 'shp_bench' || g, 'delhivery', lpad(g::text, 12, '0') || '1', t.state, t.most_recent_status,
                   t.checkpoints, now()
            from generate_series(1, ${n}::int) g,
                 (select * from shipments where jsonb_array_length(checkpoints) = 6 limit 1) t`;
  await sql`insert into follows (account_id, shipment_id) select ${acc}, 'shp_bench' || g from generate_series(1, ${n}::int) g`;
  await sql`insert into events (id, shipment_id, type, status, enqueued_at)
            select 'evt_bench' || g || '_' || k, 'shp_bench' || g, 'tracking.updated', 'in_transit', now()
            from generate_series(1, ${n}::int) g, generate_series(1, 3) k`;
  await sql`insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, enqueued_at)
            select 'dlv_bench' || g, ${wh}, ${acc}, 'evt_bench' || g || '_1', 'shp_bench' || g, 'tracking.updated',
                   'live', now()
            from generate_series(1, ${Math.ceil(n / 100)}::int) g`;
  await sql`vacuum analyze`;
  const [{ size }] = (await sql`select pg_database_size(current_database())::float8 as size`) as unknown as [
    { size: number },
  ];
  console.log(`grew to ${n} shipments in ${seconds(t0)} s; database ${Math.round(size / 2 ** 20)} MiB`);

  const file = join(work, "backup.dump");
  t0 = performance.now();
  const dump = spawnSync("pg_dump", ["--format=custom", "--file", file, "--dbname", source.url], { encoding: "utf8" });
  if (dump.status !== 0) throw new Error(dump.stderr);
  console.log(`pg_dump --format=custom: ${seconds(t0)} s, ${Math.round(statSync(file).size / 2 ** 20)} MiB`);

  await admin.unsafe(`create database "${target}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${target}`;
  t0 = performance.now();
  const restore = spawnSync("pg_restore", ["--no-owner", "--jobs", "2", "--dbname", url.toString(), file], {
    encoding: "utf8",
  });
  if (restore.status !== 0) throw new Error(restore.stderr);
  console.log(`pg_restore --jobs 2: ${seconds(t0)} s`);
  const check = postgres(url.toString(), { max: 1 });
  const [{ shipments }] = (await check`select count(*)::int as shipments from shipments`) as unknown as [
    { shipments: number },
  ];
  await check.end();
  console.log(`restored ${shipments} shipments`);
} finally {
  await admin.unsafe(`drop database if exists "${target}" with (force)`);
  await admin.end();
  await source.drop();
  rmSync(work, { recursive: true, force: true });
}
