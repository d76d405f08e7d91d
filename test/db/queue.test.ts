/**
 * The claim engine (src/jobs/queue.ts) on a queue table of its own: what a new queue gets from `defineQueue` (a
 * table name, a lease, the statements). The re-check queue's own behaviour is in test/following/claims.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLeaseKeeper } from "../../src/jobs/leases.ts";
import { defineQueue } from "../../src/jobs/queue.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";

let tdb: TestDatabase;
const T0 = Date.UTC(2026, 10, 5, 12);
const jobs = defineQueue<{ id: string; attempts: number }>("engine_jobs", {
  key: "id",
  failures: "attempts",
  returning: "q.id, q.attempts",
  channel: "engine_jobs",
});

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.sql`create table engine_jobs (id text primary key, due_at timestamptz not null, lease_until timestamptz, lease_owner text, attempts int not null default 0)`;
});
afterAll(() => tdb.drop());

/** Rows a..(a+n-1), due one second apart from `fromMs`. */
async function seed(prefix: string, n: number, fromMs: number): Promise<void> {
  await tdb.sql`delete from engine_jobs`;
  const rows = Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    due_at: new Date(fromMs + i * 1000).toISOString(),
  }));
  await tdb.sql`insert into engine_jobs ${tdb.sql(rows)}`;
}

const state = async (id: string) =>
  (await tdb.sql`select to_json(due_at)#>>'{}' as due, lease_owner, attempts from engine_jobs where id = ${id}`)[0];

describe("defineQueue statements", () => {
  test("claim takes due rows oldest first with a lease; concurrent claimers take disjoint rows; a leased row is skipped until its lease runs out", async () => {
    await seed("j", 6, T0 - 10_000);
    const now = T0;
    const [a, b] = await Promise.all([
      jobs.claim(tdb.sql, { nowMs: now, limit: 3, leaseMs: 60_000, owner: "A" }),
      jobs.claim(tdb.sql, { nowMs: now, limit: 3, leaseMs: 60_000, owner: "B" }),
    ]);
    const ids = [...a, ...b].map((r) => r.id).sort();
    expect(ids).toEqual(["j0", "j1", "j2", "j3", "j4", "j5"]);
    expect(await jobs.claim(tdb.sql, { nowMs: now + 59_999, limit: 10, leaseMs: 60_000, owner: "C" })).toEqual([]);
    const again = await jobs.claim(tdb.sql, { nowMs: now + 60_000, limit: 10, leaseMs: 60_000, owner: "C" });
    expect(again.map((r) => r.id).sort()).toEqual(ids);
  });

  test("nothing not yet due is claimed", async () => {
    await seed("f", 3, T0 + 1);
    expect(await jobs.claim(tdb.sql, { nowMs: T0, limit: 10, leaseMs: 1_000, owner: "A" })).toEqual([]);
  });

  test("fail counts a failure and sets the next time; complete deletes; both only while the lease is the caller's", async () => {
    await seed("o", 3, T0 - 5_000);
    await jobs.claim(tdb.sql, { nowMs: T0, limit: 3, leaseMs: 5_000, owner: "A" });
    expect(await jobs.fail(tdb.sql, "o0", "B", T0 + 60_000)).toBe(false);
    expect(await jobs.fail(tdb.sql, "o0", "A", T0 + 60_000)).toBe(true);
    expect(await state("o0")).toEqual({ due: "2026-11-05T12:01:00+00:00", lease_owner: null, attempts: 1 });
    expect(await jobs.complete(tdb.sql, ["o1", "o2"], "B")).toBe(0);
    expect(await jobs.complete(tdb.sql, ["o1", "o2"], "A")).toBe(2);
    expect([...(await tdb.sql`select id from engine_jobs`)]).toEqual([{ id: "o0" }]);
  });

  test("release gives held rows back due now; renew moves only the caller's leases; expireLeases tidies lapsed ones", async () => {
    await seed("r", 3, T0 - 5_000);
    await jobs.claim(tdb.sql, { nowMs: T0, limit: 2, leaseMs: 5_000, owner: "A" });
    expect(await jobs.renew(tdb.sql, ["r0", "r1", "r2"], "A", T0 + 20_000)).toEqual(
      expect.arrayContaining(["r0", "r1"]),
    );
    expect(await jobs.renew(tdb.sql, ["r0"], "B", T0 + 20_000)).toEqual([]);
    expect(await jobs.release(tdb.sql, ["r0"], "A", T0 + 1_000)).toBe(1);
    expect(await state("r0")).toEqual({ due: "2026-11-05T12:00:01+00:00", lease_owner: null, attempts: 0 });
    expect(await jobs.expireLeases(tdb.sql, T0 + 19_999)).toBe(0);
    expect(await jobs.expireLeases(tdb.sql, T0 + 20_000)).toBe(1);
    expect((await state("r1"))!.lease_owner).toBeNull();
  });

  test("a claimer wakes on NOTIFY of its channel, sent at commit", async () => {
    let wakes = 0;
    const stop = await jobs.listen(tdb.sql, () => wakes++);
    const before = wakes;
    await tdb.sql.begin(async (tx) => {
      await tx`select pg_notify('engine_jobs', '')`;
    });
    expect(await eventually(() => wakes > before)).toBe(true);
    await stop();
  });

  test("the lease keeper renews every held row to now + lease, and only while it is the owner", async () => {
    await seed("k", 2, T0 - 1_000);
    const clock = new FakeClock(T0);
    const held = (await jobs.claim(tdb.sql, { nowMs: T0, limit: 2, leaseMs: 6_000, owner: "A" })).map((r) => ({
      id: r.id,
      leaseUntilMs: T0 + 6_000,
    }));
    await tdb.sql`update engine_jobs set lease_owner = 'B' where id = 'k1'`;
    const keeper = createLeaseKeeper({
      queue: jobs,
      sql: tdb.sql,
      clock,
      owner: "A",
      leaseMs: 6_000,
      held: () => held,
      log: silentLogger,
    });
    clock.advance(4_000);
    await keeper.renew();
    expect(held.find((h) => h.id === "k0")!.leaseUntilMs).toBe(T0 + 10_000);
    expect(held.find((h) => h.id === "k1")!.leaseUntilMs).toBe(T0 + 6_000);
    expect((await tdb.sql`select to_json(lease_until)#>>'{}' as l from engine_jobs where id = 'k0'`)[0]!.l).toBe(
      "2026-11-05T12:00:10+00:00",
    );
  });
});

describe("a partitioned queue table", () => {
  const parts = defineQueue<{ id: string; created_at: string }>("engine_parts", {
    key: "id",
    by: "key",
    partition: { column: "created_at", type: "timestamptz" },
    returning: "q.id, q.created_at",
  });
  const at = (i: number) => new Date(T0 - (i % 2) * 7 * 86_400_000).toISOString();

  test("the claim returns each row's partition key; renew, release and complete take it; plain keys are refused", async () => {
    await tdb.sql`create table engine_parts (id text, created_at timestamptz, due_at timestamptz not null, lease_until timestamptz, lease_owner text, primary key (id, created_at)) partition by range (created_at)`;
    const cut = new Date(T0 - 86_400_000).toISOString();
    await tdb.sql.unsafe(
      `create table engine_parts_old partition of engine_parts for values from (minvalue) to ('${cut}')`,
    );
    await tdb.sql.unsafe(
      `create table engine_parts_new partition of engine_parts for values from ('${cut}') to (maxvalue)`,
    );
    for (let i = 0; i < 4; i++)
      await tdb.sql`insert into engine_parts (id, created_at, due_at) values (${`p${i}`}, ${at(i)}, ${new Date(T0).toISOString()})`;
    const now = T0 + 1000;
    const claimed = await parts.claim(tdb.sql, {
      nowMs: now,
      limit: 10,
      leaseMs: 60_000,
      owner: "w1",
      candidates: { strings: ["select id, created_at from engine_parts for update skip locked"], values: [] },
    });
    expect(claimed.map((r) => r.id).sort()).toEqual(["p0", "p1", "p2", "p3"]);
    const keys = (rows: typeof claimed) => ({ ids: rows.map((r) => r.id), parts: rows.map((r) => r.created_at) });
    expect((await parts.renew(tdb.sql, keys(claimed), "w1", now + 120_000)).sort()).toEqual(["p0", "p1", "p2", "p3"]);
    expect(await parts.release(tdb.sql, keys(claimed.slice(0, 1)), "w1", now)).toBe(1);
    expect(await parts.complete(tdb.sql, keys(claimed.slice(1)), "w1")).toBe(3);
    await expect(parts.complete(tdb.sql, ["p0"], "w1")).rejects.toBeInstanceOf(TypeError);
    const left = await tdb.sql`select id, lease_owner from engine_parts`;
    expect(left.map((r) => ({ ...r }))).toEqual([{ id: claimed[0]!.id, lease_owner: null }]);
  });
});
