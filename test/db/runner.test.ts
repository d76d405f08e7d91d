/**
 * The job runner (src/jobs/runner.ts) over a queue table of its own on real PostgreSQL: rows of one key run one at a
 * time while other keys run beside them, `stop()` gives unstarted rows back at once and waits for running ones, and
 * the queue's `tries`, `dueFollowsLease` and `settle` (what the alerts pipeline uses).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { defineQueue } from "../../src/jobs/queue.ts";
import { createRunner } from "../../src/jobs/runner.ts";
import { frag } from "../../src/jobs/fragment.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";

interface Job {
  id: string;
  grp: string;
}
let tdb: TestDatabase;
const T0 = Date.UTC(2026, 10, 5, 12);
const clock = new FakeClock(T0);
const jobs = defineQueue<Job>("runner_jobs", { key: "id", returning: "q.id, q.grp" });

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.sql`create table runner_jobs (id text primary key, grp text not null, due_at timestamptz not null,
    lease_until timestamptz, lease_owner text, tries int not null default 0, state text not null default 'pending')`;
});
afterAll(() => tdb.drop());

async function seed(rows: [string, string][]): Promise<void> {
  await tdb.sql`delete from runner_jobs`;
  for (const [id, grp] of rows)
    await tdb.sql`insert into runner_jobs (id, grp, due_at) values (${id}, ${grp}, ${new Date(T0 - 1000).toISOString()})`;
}

/** A runner whose tasks end when the test ends them (`finish`), noting how many of each key run at once. */
function heldRunner() {
  const running = new Map<string, number>();
  const peak = { perKey: 0, total: 0 };
  const open: (() => void)[] = [];
  let started: (() => void) | undefined;
  const runner = createRunner<Job>({
    name: "test",
    clock,
    log: silentLogger,
    concurrency: 4,
    keyOf: (r) => r.grp,
    prefetch: 0,
    refillAt: 1,
    maxWaitMs: 60_000,
    drainBatch: 10,
    claim: (limit, nowMs) => jobs.claim(tdb.sql, { nowMs, limit, leaseMs: 60_000, owner: "w" }),
    task: async (r) => {
      running.set(r.grp, (running.get(r.grp) ?? 0) + 1);
      peak.perKey = Math.max(peak.perKey, running.get(r.grp)!);
      peak.total = Math.max(
        peak.total,
        [...running.values()].reduce((a, b) => a + b, 0),
      );
      await new Promise<void>((resolve) => {
        open.push(resolve);
        started?.();
      });
      running.set(r.grp, running.get(r.grp)! - 1);
      await jobs.complete(tdb.sql, [r.id], "w");
    },
    release: (rows) =>
      jobs.release(
        tdb.sql,
        rows.map((r) => r.id),
        "w",
        clock.now(),
      ),
  });
  /** Resolves once `n` tasks are waiting to be ended. */
  const waiting = (n: number) =>
    new Promise<void>((resolve) => {
      started = () => open.length >= n && resolve();
      started();
    });
  const finish = () => {
    for (const end of open.splice(0)) end();
  };
  return { runner, peak, waiting, finish };
}

test("rows of one key run one at a time, other keys beside them; drain returns when a claim comes back empty", async () => {
  await seed([
    ["a1", "A"],
    ["a2", "A"],
    ["a3", "A"],
    ["b1", "B"],
    ["b2", "B"],
  ]);
  const h = heldRunner();
  const drained = h.runner.drain();
  for (let round = 0; round < 3; round++) {
    await h.waiting(round < 2 ? 2 : 1);
    h.finish();
  }
  expect(await drained).toBe(5);
  expect(h.peak).toEqual({ perKey: 1, total: 2 });
  expect(await tdb.sql`select id from runner_jobs`).toHaveLength(0);
});

test("stop() gives the unstarted rows back at once (lease cleared, due now) and waits for the running ones", async () => {
  await seed([
    ["a1", "A"],
    ["a2", "A"],
    ["b1", "B"],
  ]);
  const h = heldRunner();
  const drained = h.runner.drain();
  await h.waiting(2);
  const stopped = h.runner.stop({ timeout: 30_000 });
  const left = async () =>
    (await tdb.sql`select id, lease_owner from runner_jobs order by id`).map((r) => [r.id, r.lease_owner]);
  // a2 waited behind a1: it is free again before the running tasks end.
  expect(await eventually(async () => (await left()).some(([id, o]) => id === "a2" && o === null))).toBe(true);
  expect(await left()).toEqual([
    ["a1", "w"],
    ["a2", null],
    ["b1", "w"],
  ]);
  h.finish();
  await stopped;
  expect(await drained).toBe(3);
  expect(await left()).toEqual([["a2", null]]);
});

test("a queue may count a try at the claim, move the due time to the lease end, and settle a row that stays", async () => {
  await seed([["t1", "A"]]);
  const q = defineQueue<Job & { tries: number }>("runner_jobs", {
    key: "id",
    token: "lease",
    live: "state = 'pending'",
    tries: "tries",
    dueFollowsLease: true,
    returning: "q.id, q.grp, q.tries",
  });
  const [row] = await q.claim(tdb.sql, { nowMs: T0, limit: 5, leaseMs: 30_000, owner: "" });
  expect(row!.tries).toBe(1);
  const [due] = await tdb.sql`select to_json(due_at)#>>'{}' as due from runner_jobs`;
  expect(due!.due).toBe("2026-11-05T12:00:30+00:00");
  const token = q.leaseToken({ nowMs: T0, leaseMs: 30_000, owner: "" });
  expect(await q.settle(tdb.sql, "t1", "2026-11-05T12:00:29.000Z", frag`state = 'done'`)).toBe(false);
  expect(await q.settle(tdb.sql, "t1", token, frag`state = ${"done"}`)).toBe(true);
  expect(await q.settle(tdb.sql, "t1", token, frag`state = 'again'`)).toBe(false);
  const [r] = await tdb.sql`select state, lease_until from runner_jobs`;
  expect(r).toEqual({ state: "done", lease_until: null });
});

test("with keyFullAt a full key is left out of claims and the drain goes on with the others while it runs", async () => {
  await seed([
    ["a1", "A"],
    ["a2", "A"],
    ["a3", "A"],
    ["a4", "A"],
    ["b1", "B"],
    ["b2", "B"],
    ["b3", "B"],
  ]);
  const asked: string[][] = [];
  const open: (() => void)[] = [];
  let started: (() => void) | undefined;
  const done: string[] = [];
  const runner = createRunner<Job>({
    name: "test",
    clock,
    log: silentLogger,
    concurrency: 10,
    keyOf: (r) => r.grp,
    keyFullAt: 2,
    prefetch: 0,
    refillAt: 1,
    maxWaitMs: 60_000,
    drainBatch: 2,
    claim: (limit, nowMs, full) => {
      asked.push([...full]);
      const candidates = frag`select ctid from runner_jobs where lease_until is null and grp <> all(${[...full]}::text[])
        order by id limit ${limit} for update skip locked`;
      return jobs.claim(tdb.sql, { nowMs, limit, leaseMs: 60_000, owner: "w", candidates });
    },
    // A's rows end when the test ends them; B's at once.
    task: async (r) => {
      if (r.grp === "A")
        await new Promise<void>((resolve) => {
          open.push(resolve);
          started?.();
        });
      done.push(r.id);
      await jobs.complete(tdb.sql, [r.id], "w");
    },
    release: () => Promise.resolve(),
  });
  const drained = runner.drain();
  // a1 runs and a2 waits behind it: A is full, so the claims go on with B alone.
  await new Promise<void>((resolve) => {
    started = () => open.length === 1 && resolve();
    started();
  });
  expect(await eventually(async () => ["b1", "b2", "b3"].every((id) => done.includes(id)))).toBe(true);
  expect(done).toEqual(["b1", "b2", "b3"]);
  expect(asked.some((full) => full.includes("A"))).toBe(true);
  // A's rows end one by one; the rest of A is claimed as they do.
  started = () => {
    for (const end of open.splice(0)) end();
  };
  started();
  expect(await drained).toBe(7);
  expect(done.slice(3)).toEqual(["a1", "a2", "a3", "a4"]);
  expect(await tdb.sql`select id from runner_jobs`).toHaveLength(0);
});
