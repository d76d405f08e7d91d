/**
 * Backup and restore (docs/operations/backup-restore.md): `pg_dump` of a live database while the service writes
 * to it (lookups, follows and simulator steps through the API), `pg_restore` into a new database, and the service
 * started on the copy. The dump runs under a snapshot this test exported, so the test reads in the same snapshot
 * what the copy must hold: the same shipments (and checkpoints), events and pending deliveries; the service on
 * the copy serves them and sends every pending delivery exactly once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import { EVENT_TYPES } from "../../src/domain/events.ts";
import { startService, type RunningService } from "../client/service.ts";
import { ADMIN_URL, createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let source: TestDatabase;
let restored: TestDatabase | undefined;
let rx: Receiver;
const running: RunningService[] = [];
const work = mkdtempSync(join(tmpdir(), "ct-backup-"));
const SECRETS_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

beforeAll(async () => {
  source = await createTestDatabase();
  rx = await startReceiver();
});
afterAll(async () => {
  for (const s of running) await s.stop().catch(() => {});
  rx?.stop();
  await restored?.drop();
  await source?.drop();
  rmSync(work, { recursive: true, force: true });
});

/** A 13-digit Delhivery sandbox number ending in 1 (in transit, one step per advance), unique per `i`. */
const awb = (i: number) => `${String(100_000_000_000 + i)}1`;

interface Snapshot {
  shipments: string[];
  events: string[];
  pending: { id: string; event_id: string }[];
}

async function snapshotOf(sql: postgres.Sql | postgres.TransactionSql): Promise<Snapshot> {
  return {
    shipments: (
      await sql`select tracking_number || ':' || jsonb_array_length(checkpoints) as s from shipments order by 1`
    ).map((r) => r.s as string),
    events: (await sql`select id from events order by id`).map((r) => r.id as string),
    pending: (await sql`select id, event_id from deliveries where state = 'pending' order by id`).map((r) => ({
      id: r.id as string,
      event_id: r.event_id as string,
    })),
  };
}

test("a dump taken under load restores into a database the service runs on, with the same rows", async () => {
  // The API alone writes (no worker): every delivery stays pending until the copy's worker sends it.
  const env = await webhookEnv({ SECRETS_KEY });
  const api = await startService({ ...env, ROLE: "api" }, 30_000, { tdb: source });
  running.push(api);
  const headers = { "x-api-key": api.key, "content-type": "application/json" };
  const created = await api.fetch("/v1/webhooks", {
    method: "POST",
    headers,
    body: JSON.stringify({
      url: rx.url("/restored"),
      events: [...EVENT_TYPES],
      mode: "live",
    }),
  });
  expect(created.status).toBe(201);
  let next = 0;
  // A followed shipment, and (`step`) its next scripted state: an event and its pending delivery.
  const write = async (step: boolean) => {
    const n = awb(next++);
    expect((await api.fetch(`/v1/track?courier=delhivery&tracking_number=${n}`, { headers })).status).toBe(200);
    if (!step) return;
    const moved = await api.fetch(`/v1/sandbox/shipments/delhivery/${n}/advance`, { method: "POST", headers });
    expect(moved.status).toBe(200);
  };
  // Within the sandbox's 30 advances a minute per account.
  for (let i = 0; i < 12; i++) await write(true);

  // Lookups keep going during the dump; at most 150 (the account's limit is 600 requests a minute).
  let writing = true;
  let writes = 0;
  const writers = [0, 1].map(async () => {
    while (writing && next < 150) {
      await write(false);
      writes++;
    }
  });
  const file = join(work, "backup.dump");
  const holder = postgres(source.url, { max: 1, onnotice: () => {} });
  let expected: Snapshot | undefined;
  let writesDuringDump = 0;
  try {
    await holder.begin("isolation level repeatable read read only", async (tx) => {
      const [{ snap }] = (await tx`select pg_export_snapshot() as snap`) as unknown as [{ snap: string }];
      expected = await snapshotOf(tx);
      const before = writes;
      const dump = spawn("pg_dump", ["--format=custom", `--snapshot=${snap}`, "--file", file, "--dbname", source.url], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let err = "";
      dump.stderr.on("data", (b: Buffer) => (err += b.toString()));
      const code = await new Promise<number | null>((r) => dump.on("exit", r));
      expect([code, err]).toEqual([0, ""]);
      // Writes went on while pg_dump ran; wait for one more if the dump was quicker than a lookup.
      expect(await eventually(() => writes > before, 30_000)).toBe(true);
      writesDuringDump = writes - before;
    });
  } finally {
    writing = false;
    await Promise.all(writers);
    await holder.end({ timeout: 5 });
  }
  expect(writesDuringDump).toBeGreaterThan(0);
  const live = await snapshotOf(source.sql);
  expect(live.shipments.length).toBeGreaterThan(expected!.shipments.length);
  expect(expected!.pending.length).toBe(expected!.events.length);
  await api.stop();

  // Restore into a new, empty database, as docs/operations/backup-restore.md says.
  const name = `ct_rs_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end({ timeout: 5 });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pgRestore = spawnSync("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", url.toString(), file], {
    encoding: "utf8",
  });
  expect([pgRestore.status, pgRestore.stderr]).toEqual([0, ""]);
  const { db, sql } = connect(url.toString(), { max: 2 });
  restored = {
    name,
    url: url.toString(),
    db,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 });
      const a = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end({ timeout: 5 });
    },
  };
  expect(await snapshotOf(restored.sql)).toEqual(expected!);

  // The service on the copy: same SECRETS_KEY, same API key; it serves the shipments and sends what was pending.
  const svc = await startService({ ...env, COURIER_MODE: "live" }, 30_000, { tdb: restored, expectKey: false });
  running.push(svc);
  const list = await svc.fetch("/v1/shipments?limit=100", { headers: { "x-api-key": api.key } });
  expect(list.status).toBe(200);
  const { data } = (await list.json()) as { data: { shipments: { tracking_number: string }[] } };
  expect(data.shipments.map((s) => s.tracking_number).sort()).toEqual(
    expected!.shipments.map((s) => s.split(":")[0]!).sort(),
  );
  const ids = expected!.pending.map((d) => d.id);
  const copy = restored.sql;
  const sent = async () =>
    (
      await copy`select count(*)::int as n from deliveries
                 where id = any(${ids}) and state = 'delivered' and lease_until is null`
    )[0]!.n === ids.length;
  expect(await eventually(sent, 60_000)).toBe(true);
  const got = rx.on("/restored").map((r) => r.headers["x-webhook-event-id"]);
  for (const d of expected!.pending)
    expect([d.event_id, got.filter((e) => e === d.event_id).length]).toEqual([d.event_id, 1]);
}, 180_000);
