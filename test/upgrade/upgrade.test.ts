/**
 * Upgrade from the previous release (docs/releases.md, "Upgrades"): its fixture database, written through its own
 * API, is restored, migrated to this code's schema, and served by this code's processes (an API process first,
 * then one with the workers, as a rolling deploy starts them). Every row is still there, the API reads the old
 * accounts, shipments and webhooks, and every delivery the old release left pending goes out exactly once, signed
 * with the secret the old release issued.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { runAdmin } from "../../src/cli/commands.ts";
import { connect } from "../../src/db/client.ts";
import { migrateDatabase } from "../../src/db/migrate.ts";
import { rowCounts } from "../../scripts/release/fixture.ts";
import { startService, type RunningService } from "../client/service.ts";
import type { TestDatabase } from "../helpers/db.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { previousCode, previousRelease, restoreFixture, type Fixture } from "./support.ts";

let fixture: Fixture;
let tdb: TestDatabase;
let rx: Receiver;
const running: RunningService[] = [];
let env: Record<string, string>;
let api: RunningService;
let countsBefore: Record<string, number>;
let countsAfter: Record<string, number>;
let idsBefore: Record<string, string[]>;
let idsAfter: Record<string, string[]>;

/** The `id` of every row of each table that has one (partitioned tables through their parent). */
async function rowIds(): Promise<Record<string, string[]>> {
  const tables = await tdb.sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'id'
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
  const ids: Record<string, string[]> = {};
  for (const { name } of tables)
    ids[name] = (await tdb.sql.unsafe(`select id::text from "${name}" order by 1`)).map((r) => r.id as string);
  return ids;
}

beforeAll(async () => {
  fixture = previousRelease();
  tdb = await restoreFixture(fixture);
  rx = await startReceiver();
  env = await webhookEnv({
    SECRETS_KEY: fixture.manifest.secrets_key,
    // The fixture's rows are as old as its release: nothing of it may be pruned while the test reads it.
    RETENTION_DAYS: "36500",
    // Live couriers without credentials: re-checks of the old shipments fail and change nothing the test reads.
    COURIER_MODE: "live",
  });
  countsBefore = await rowCounts(tdb.sql);
  idsBefore = await rowIds();
  await migrateDatabase(tdb.url);
  countsAfter = await rowCounts(tdb.sql);
  idsAfter = await rowIds();
  api = await startService({ ...env, ROLE: "api" }, 30_000, { tdb, expectKey: false });
  running.push(api);
}, 60_000);
afterAll(async () => {
  for (const s of running) await s.stop().catch(() => {});
  rx?.stop();
  await tdb?.drop();
});

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

test("the restored fixture is the previous release's data, and the migration keeps every row", async () => {
  expect(countsBefore).toEqual(fixture.manifest.row_counts);
  // A migration may add rows (a backfill), never lose one.
  for (const [table, n] of Object.entries(fixture.manifest.row_counts))
    expect({ table, kept: (countsAfter[table] ?? 0) >= n }).toEqual({ table, kept: true });
  expect(Object.keys(idsBefore).length).toBeGreaterThan(10);
  for (const [table, ids] of Object.entries(idsBefore)) {
    const now = new Set(idsAfter[table]);
    expect({ table, lost: ids.filter((id) => !now.has(id)) }).toEqual({ table, lost: [] });
  }
});

test("this code serves the previous release's accounts, shipments and webhooks", async () => {
  const { manifest } = fixture;
  for (const account of manifest.accounts) {
    const headers = { "x-api-key": account.api_key };
    const res = await api.fetch("/v1/shipments?limit=100", { headers });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { shipments: { tracking_number: string }[] } };
    const mine = manifest.shipments.filter((s) => s.account_email === account.email);
    expect(data.shipments.map((s) => s.tracking_number).sort()).toEqual(mine.map((s) => s.tracking_number).sort());
    for (const s of mine) {
      const one = await api.fetch(`/v1/shipments/${s.courier}/${s.tracking_number}`, { headers });
      expect(one.status).toBe(200);
      const body = (await one.json()) as { data: { Checkpoints: unknown[] } };
      expect({ n: s.tracking_number, checkpoints: body.data.Checkpoints.length }).toEqual({
        n: s.tracking_number,
        checkpoints: s.checkpoints,
      });
    }
    const hooks = await api.fetch("/v1/webhooks", { headers });
    expect(hooks.status).toBe(200);
    const listed = ((await hooks.json()) as { data: { webhooks: { id: string }[] } }).data.webhooks.map((w) => w.id);
    expect(listed.sort()).toEqual(
      manifest.webhooks
        .filter((w) => w.account_email === account.email)
        .map((w) => w.id)
        .sort(),
    );
  }
});

test("every delivery the previous release left pending goes out exactly once, signed with its secret", async () => {
  const { manifest } = fixture;
  const keyOf = (email: string) => manifest.accounts.find((a) => a.email === email)!.api_key;
  // The customer brings the receiver that was down back, at a new address (this test's receiver).
  for (const w of manifest.webhooks.filter((w) => w.receiver === "down")) {
    const res = await api.fetch(`/v1/webhooks/${w.id}`, {
      method: "PUT",
      headers: { "x-api-key": keyOf(w.account_email), "content-type": "application/json" },
      body: JSON.stringify({ url: rx.url(`/${w.id}`) }),
    });
    expect(res.status).toBe(200);
  }
  // The workers of this code start on the migrated database while the API process still serves.
  running.push(await startService({ ...env, ROLE: "all" }, 30_000, { tdb, expectKey: false }));

  const ids = manifest.pending_deliveries.map((d) => d.id);
  await until("the pending deliveries to be delivered, none still held", async () => {
    const rows = await tdb.sql`select count(*)::int as n from deliveries
                               where id = any(${ids}) and state = 'delivered' and lease_until is null`;
    return rows[0]!.n === ids.length ? true : undefined;
  }).catch(async (e) => {
    console.log(await tdb.sql`select id, state, attempts, next_attempt_at, last_error, lease_until from deliveries`);
    console.log(running[1]!.stdout().slice(-5000));
    throw e;
  });
  for (const d of manifest.pending_deliveries) {
    const got = rx.on(`/${d.webhook_id}`).filter((r) => r.headers["x-webhook-event-id"] === d.event_id);
    expect({ delivery: d.id, received: got.length }).toEqual({ delivery: d.id, received: 1 });
    const secret = manifest.webhooks.find((w) => w.id === d.webhook_id)!.secret;
    expect(got[0]!.headers["x-service-signature"]).toBe(
      `sha256=${createHmac("sha256", secret).update(got[0]!.raw).digest("hex")}`,
    );
  }
  const attempts = await tdb.sql`select delivery_id, count(*)::int as n from delivery_attempts
                                 where delivery_id = any(${ids}) and status_code = 200 group by 1`;
  expect(attempts.map((a) => a.n)).toEqual(ids.map(() => 1));
}, 120_000);

// The previous release's code, from git (absent from a shallow clone: the test then says so and skips).
const previous = previousCode(previousRelease().manifest.commit);
if (!previous) console.warn("upgrade test: the previous release's commit is not in this clone; its code is not run");
afterAll(() => {
  if (previous) rmSync(previous, { recursive: true, force: true });
});

test.skipIf(!previous)(
  "the previous release's code keeps serving on the migrated schema (a rolling deploy, or a rollback of the code)",
  async () => {
    const { manifest } = fixture;
    const old = await startService({ ...env, COURIER_MODE: "sandbox", ROLE: "api" }, 30_000, {
      tdb,
      expectKey: false,
      cwd: previous,
    });
    running.push(old);
    // The process is that release (1.0.0 had no version in /healthz; later ones name theirs).
    const health = (await (await old.fetch("/healthz")).json()) as { version?: string };
    expect(health.version ?? manifest.version).toBe(manifest.version);
    const dev = manifest.accounts.find((a) => a.email === "dev@localhost")!.api_key;
    const headers = { "x-api-key": dev, "content-type": "application/json" };
    const listed = await old.fetch("/v1/shipments?limit=100", { headers });
    expect(listed.status).toBe(200);
    // The old code writes through the new schema: a lookup (shipment, follow, event, outbox rows), a webhook.
    const tracked = await old.fetch("/v1/track?courier=delhivery&tracking_number=1234567890331", { headers });
    expect(tracked.status).toBe(200);
    const created = await old.fetch("/v1/webhooks", {
      method: "POST",
      headers,
      body: JSON.stringify({ url: rx.url("/from-previous"), events: ["tracking.delivered"], mode: "test" }),
    });
    expect(created.status).toBe(201);
    // And this code reads what the old code wrote.
    const read = await api.fetch("/v1/shipments/delhivery/1234567890331", { headers });
    expect(read.status).toBe(200);
    const hooks = await api.fetch("/v1/webhooks", { headers });
    const ids = ((await hooks.json()) as { data: { webhooks: { id: string }[] } }).data.webhooks.map((w) => w.id);
    expect(ids).toContain(((await created.json()) as { data: { id: string } }).data.id);
  },
  60_000,
);
test("the previous release's schedule stays in recheck_queue until admin contract, which moves it to recheck_schedule", async () => {
  const queued = async () =>
    (await tdb.sql`select shipment_id, due_at, failures from recheck_queue order by shipment_id`).map((r) => ({
      ...r,
    }));
  const before = await queued();
  // The fixture's rows, and any the previous release's code (run above) scheduled on the migrated schema.
  expect(before.length).toBeGreaterThanOrEqual(fixture.manifest.row_counts.recheck_queue!);
  // Migrated from 1.0.0: layout level 1, so 1.0.0's processes keep claiming what this code schedules.
  expect((await tdb.sql`select value from service_settings where name = 'compat_level'`)[0]?.value).toBe("1");
  expect((await tdb.sql`select count(*)::int as n from recheck_schedule`)[0]!.n).toBe(0);
  const { db, sql } = connect(tdb.url, { max: 1 });
  try {
    expect(await runAdmin(db, "contract", { flags: {}, positionals: [] })).toMatchObject({
      compat_level: 2,
      previous: 1,
      schedule_rows_moved: before.length,
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
  expect(await queued()).toEqual([]);
  const moved = await tdb.sql`select shipment_id, due_at, failures from recheck_schedule order by shipment_id`;
  expect(moved.map((r) => ({ ...r }))).toEqual(before);
});
