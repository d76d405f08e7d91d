/**
 * Claims: two schedulers on one database re-check every
 * due shipment exactly once per interval; a lease left by a killed process
 * is re-claimed after it expires, without a lost or duplicated event.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppDeps } from "../../src/deps.ts";
import { connect } from "../../src/db/client.ts";
import { silentLogger } from "../../src/lib/log.ts";
import {
  bucketGrid,
  DUE_BUCKET_MS,
  recordFailure,
  releaseExpiredLeases,
  unschedule,
} from "../../src/modules/following/claims.ts";
import { ChunkWalk, CURSOR_EVERY } from "../../src/modules/following/chunk-walk.ts";
import {
  claimDueShipments,
  createRecheckRunner,
  defaultLeaseMs,
  MIN_RECHECK_LEASE_MS,
  releaseClaims,
  runRecheckBatch,
} from "../../src/modules/following/recheck.ts";
import { loadConfig } from "../../src/configure.ts";
import { createCourierBackends, type CourierBackends } from "../../src/modules/couriers/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import {
  eventsOf,
  liveWebhook,
  outboxOf,
  pastInterval,
  seedMany,
  setDue,
  shipmentRow,
  track,
  unscheduleRows,
} from "./helpers.ts";
import { servicesFor } from "../helpers/services.ts";
import { eventually } from "../helpers/eventually.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
/** A second, independent runner: its own pool and its own courier backends (no shared coalescing). */
let other: { deps: AppDeps; close(): Promise<void> };
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60", RECHECK_INTERVAL_SECONDS: "60" });
  growth = await ctx.account("growth");
  await liveWebhook(ctx, growth.key);
  const pool = connect(ctx.tdb.url, { max: 5 });
  const backends: CourierBackends = createCourierBackends({
    config: ctx.config,
    clock: ctx.clock,
    log: silentLogger,
    simulator: ctx.sim,
  });
  other = {
    deps: { ...ctx.deps, db: pool.db, backends, services: servicesFor(pool.db, ctx.clock) },
    close: async () => (await backends.close(), await pool.sql.end({ timeout: 5 })),
  };
});
afterAll(async () => {
  await other.close();
  await ctx.close();
});

describe("claims shared through Postgres", () => {
  test("two runners draining concurrently: every due shipment re-checked exactly once per interval", async () => {
    const numbers: [string, string][] = [];
    for (let i = 0; i < 30; i++)
      numbers.push(["delhivery", `9${String(i).padStart(11, "0")}1`], ["bluedart", `5${String(i).padStart(8, "0")}1`]);
    await seedMany(ctx, growth.id, numbers);
    // Small claims and lanes so the two runners interleave many claim statements.
    const opts = { claimLimit: 7, perCourierConcurrency: 3, random: () => 0.5 };
    const a = createRecheckRunner(ctx.deps, { ...opts, owner: "runner-a" });
    const b = createRecheckRunner(other.deps, { ...opts, owner: "runner-b" });
    const share = { a: 0, b: 0 };
    for (let interval = 1; interval <= 3; interval++) {
      const [sa, sb] = await Promise.all([a.drain(), b.drain()]);
      share.a += sa.claimed;
      share.b += sb.claimed;
      expect(sa.claimed + sb.claimed).toBe(numbers.length);
      expect(sa.failed + sb.failed + sa.skipped + sb.skipped).toBe(0);
      for (const [c, n] of numbers) expect(`${c}:${n}:${ctx.sim.calls(c, n)}`).toBe(`${c}:${n}:${interval}`);
      // Nothing left due in this interval for either of them.
      const [again1, again2] = await Promise.all([a.drain(), b.drain()]);
      expect(again1.claimed + again2.claimed).toBe(0);
      ctx.clock.advance(60_000);
    }
    // Both did part of the work (they really ran side by side).
    expect(share.a).toBeGreaterThan(0);
    expect(share.b).toBeGreaterThan(0);
    // Every change was written once: one event per shipment per step (pending → in transit, then two updates).
    for (const [c, n] of numbers) {
      const row = (await shipmentRow(ctx, c, n))!;
      expect(await eventsOf(ctx, row.id)).toEqual([
        "tracking.in_transit/in_transit",
        "tracking.updated/in_transit",
        "tracking.updated/in_transit",
      ]);
    }
    // Out of the way of the next tests.
    await ctx.tdb.sql`delete from recheck_schedule where tracking_number in ${ctx.tdb.sql(numbers.map(([, n]) => n))}`;
  }, 90_000);

  test("a lease left by a killed process is re-claimed after it expires; the change is emitted once", async () => {
    const n = "1234567890811";
    await track(ctx, growth.key, "delhivery", n);
    const row = (await shipmentRow(ctx, "delhivery", n))!;
    ctx.clock.advance(pastInterval(ctx));

    // The "killed" process claims the row (lease 30 s) and never calls the courier nor records anything.
    const claimed = await claimDueShipments(ctx.tdb.db, ctx.clock.now(), 1000, 30_000, "killed-process");
    expect(claimed.map((r) => r.tracking_number)).toEqual([n]);
    const callsBefore = ctx.sim.calls("delhivery", n);

    // While the lease holds, no one else re-checks it, neither runner.
    expect((await runRecheckBatch(ctx.deps, { random: () => 0.5 })).claimed).toBe(0);
    expect((await runRecheckBatch(other.deps, { random: () => 0.5 })).claimed).toBe(0);
    expect(ctx.sim.calls("delhivery", n)).toBe(callsBefore);
    const leased = (await shipmentRow(ctx, "delhivery", n))!;
    expect(leased.leaseOwner).toBe("killed-process");

    // Lease expired: housekeeping counts and releases it, and the row is due again.
    ctx.clock.advance(31_000);
    expect(await releaseExpiredLeases(ctx.tdb.db, ctx.clock.now())).toBe(1);
    const stats = await runRecheckBatch(other.deps, { random: () => 0.5 });
    expect(stats.claimed).toBe(1);
    expect(ctx.sim.calls("delhivery", n)).toBe(callsBefore + 1);
    expect(await eventsOf(ctx, row.id)).toEqual(["tracking.updated/in_transit"]);
    expect((await outboxOf(ctx, row.id)).map((d) => d.eventType)).toEqual(["tracking.updated"]);

    // The dead claimer coming back cannot overwrite the new owner's result.
    expect(await recordFailure(ctx.tdb.db, row.id, "killed-process", ctx.clock.now())).toBe(false);
    // And a second re-check of the same courier answer (the zombie finishing its call) finds no change: no duplicate.
    await runRecheckBatch(ctx.deps, { random: () => 0.5 });
    expect(await eventsOf(ctx, row.id)).toEqual(["tracking.updated/in_transit"]);
    const after = (await shipmentRow(ctx, "delhivery", n))!;
    expect(after).toMatchObject({ leaseOwner: null, leaseUntil: null, recheckFailures: 0 });
  }, 30_000);

  test("stop() gives queued claims back at once instead of leaving them to their leases", async () => {
    // Digit 5: the courier never answers in time.
    await seedMany(
      ctx,
      growth.id,
      Array.from({ length: 10 }, (_, i) => ["delhivery", `8${String(i).padStart(11, "0")}5`] as const),
    );
    const r = createRecheckRunner(ctx.deps, { perCourierConcurrency: 1, owner: "stopping" });
    const drained = r.drain();
    // Stop once the drain holds all ten: one call waiting at the courier, nine queued in the lane.
    const held = async () =>
      (await ctx.tdb.sql`select count(*)::int as n from recheck_schedule where lease_owner = 'stopping'`)[0]!.n === 10;
    const calling = () =>
      Array.from({ length: 10 }, (_, i) => ctx.sim.calls("delhivery", `8${String(i).padStart(11, "0")}5`));
    expect(await eventually(async () => (await held()) && calling().some((n) => n > 0))).toBe(true);
    await r.stop({ timeout: 5_000 });
    const stats = await drained;
    expect(stats.claimed).toBeGreaterThanOrEqual(10);
    const rows = await ctx.tdb.sql`
      select q.lease_owner, q.due_at <= ${new Date(ctx.clock.now()).toISOString()} as due
      from shipments s left join recheck_schedule q on q.shipment_id = s.id where s.tracking_number like '8%5'`;
    // One was in flight (recorded as a failure, backed off); the queued ones are due again with no lease.
    expect(rows.filter((x) => x.lease_owner === "stopping")).toEqual([]);
    expect(rows.filter((x) => x.due).length).toBeGreaterThanOrEqual(9);
  }, 30_000);
});

describe("claim order and cost", () => {
  test("an overdue backlog is claimed oldest 15-minute bucket first, then the current bucket in due order; nothing not yet due; leased rows are skipped", async () => {
    // Only this test's rows are scheduled.
    await unscheduleRows(ctx);
    // Five seconds into the next bucket (buckets start at multiples of 15 minutes from 2000-01-01 UTC).
    const bucketStart = ctx.clock.now() - ((ctx.clock.now() - Date.UTC(2000, 0, 1)) % DUE_BUCKET_MS) + DUE_BUCKET_MS;
    ctx.clock.set(bucketStart + 5_000);
    const now = ctx.clock.now();
    // Due times, by name: two buckets ago, one bucket ago, earlier in the current bucket, not yet due.
    const at = {
      old1: bucketStart - DUE_BUCKET_MS - 1_000,
      old2: bucketStart - DUE_BUCKET_MS - 2_000,
      prev: bucketStart - 1,
      cur2: now - 2,
      cur1: now - 1,
      later: now + 1,
    };
    const n = (i: number) => `4${String(i).padStart(11, "0")}1`;
    const names = Object.keys(at) as (keyof typeof at)[];
    const ids = await seedMany(
      ctx,
      growth.id,
      names.map((_, i) => ["delhivery", n(i)] as const),
    );
    for (const [i, name] of names.entries()) await setDue(ctx, [ids[i]!], at[name]);
    const nameOf = (tn: string) => names[Number(tn.slice(1, -1))]!;

    // One at a time: the two rows of the oldest bucket (either order: storage order within a bucket),
    // then the previous bucket, then the current bucket by exact due time.
    const order: string[] = [];
    for (let i = 0; i < 5; i++)
      order.push(
        ...(await claimDueShipments(ctx.tdb.db, now, 1, 60_000, "order")).map((r) => nameOf(r.tracking_number)),
      );
    expect(order.slice(0, 2).sort()).toEqual(["old1", "old2"]);
    expect(order.slice(2)).toEqual(["prev", "cur2", "cur1"]);
    // Everything due is leased now: a further claim finds nothing (`later` is not due yet).
    expect(await claimDueShipments(ctx.tdb.db, now, 10, 60_000, "order")).toEqual([]);
    // The claim stamped the lease and left the due time alone.
    const row = await ctx.tdb.sql`select lease_owner, due_at from recheck_schedule where shipment_id = ${ids[0]!}`;
    expect(row[0]!.lease_owner).toBe("order");
    expect(new Date(row[0]!.due_at).getTime()).toBe(at.old1);
    // Once the leases run out, every one of them is claimable again (the stale-lease reset).
    expect(
      (await claimDueShipments(ctx.tdb.db, now + 60_001, 10, 60_000, "order-2"))
        .map((r) => nameOf(r.tracking_number))
        .sort(),
    ).toEqual(["cur1", "cur2", "later", "old1", "old2", "prev"]);
    await unscheduleRows(ctx, ids);
  });

  test("the oldest bucket holds at least 7.5 minutes of the backlog, whatever the bucket boundaries; a row due 11 minutes after the oldest waits", async () => {
    await unscheduleRows(ctx);
    const boundary = ctx.clock.now() - ((ctx.clock.now() - Date.UTC(2000, 0, 1)) % DUE_BUCKET_MS) + DUE_BUCKET_MS;
    ctx.clock.set(boundary + 40 * 60_000);
    const now = ctx.clock.now();
    // The backlog starts one minute before a boundary of the first grid: its oldest bucket there holds one minute.
    const at = { a: boundary - 60_000, c: boundary + 10 * 60_000, b: boundary + 5 * 60_000, d: boundary + 20 * 60_000 };
    expect([bucketGrid(at.a), bucketGrid(at.b), bucketGrid(boundary)]).toEqual([1, 0, 0]);
    const names = Object.keys(at) as (keyof typeof at)[];
    // Stored in the order a, c, b, d (one insert each, due as given): within a bucket, rows come in storage order.
    const ids: string[] = [];
    for (const [i, name] of names.entries())
      ids.push(...(await seedMany(ctx, growth.id, [["delhivery", `5${String(i).padStart(11, "0")}1`]], at[name])));
    const nameOf = (tn: string) => names[Number(tn.slice(1, -1))]!;
    // With the first grid alone the claim would take a, then c (stored before b in the next bucket). A claim's
    // answer is in no particular order.
    expect(
      (await claimDueShipments(ctx.tdb.db, now, 2, 60_000, "grid")).map((r) => nameOf(r.tracking_number)).sort(),
    ).toEqual(["a", "b"]);
    expect(
      (await claimDueShipments(ctx.tdb.db, now, 10, 60_000, "grid")).map((r) => nameOf(r.tracking_number)).sort(),
    ).toEqual(["c", "d"]);
    await unscheduleRows(ctx, ids);
  });

  test("claiming and every outcome of a claim write the schedule only: the shipment rows are not touched", async () => {
    await unscheduleRows(ctx);
    const ids = await seedMany(
      ctx,
      growth.id,
      Array.from({ length: 6 }, (_, i) => ["delhivery", `6${String(i).padStart(11, "0")}1`] as const),
    );
    // xmin changes with every write of a row and ctid with every new row version: both stay put if nothing writes it.
    const versions = async () =>
      (
        await ctx.tdb
          .sql`select id, xmin::text as x, ctid::text as c from shipments where id in ${ctx.tdb.sql(ids)} order by id`
      ).map((r) => `${r.id} ${r.x} ${r.c}`);
    const queueVersions = async () =>
      (await ctx.tdb.sql`select xmin::text as x from recheck_schedule where shipment_id in ${ctx.tdb.sql(ids)}`).map(
        (r) => r.x as string,
      );
    const before = await versions();
    const queueBefore = await queueVersions();
    const now = ctx.clock.now();

    const claimed = await claimDueShipments(ctx.tdb.db, now, 10, 60_000, "only-queue");
    expect(claimed.map((c) => c.id).sort()).toEqual([...ids].sort());
    expect(
      claimed.every(
        (c) => c.courier === "delhivery" && /^6\d{11}1$/.test(c.tracking_number) && c.recheck_failures === 0,
      ),
    ).toBe(true);
    // The lease went onto the queue rows.
    expect((await queueVersions()).filter((x) => queueBefore.includes(x))).toEqual([]);
    expect(await recordFailure(ctx.tdb.db, ids[0]!, "only-queue", now + 1_000)).toBe(true);
    expect(await releaseClaims(ctx.tdb.db, [ids[1]!], "only-queue", now)).toBe(1);
    await unschedule(ctx.tdb.db, ids[2]!, "only-queue");
    expect(await releaseExpiredLeases(ctx.tdb.db, now + 60_001)).toBe(3);
    expect(await versions()).toEqual(before);
    expect(
      (await ctx.tdb.sql`select count(*)::int as n from recheck_schedule where shipment_id in ${ctx.tdb.sql(ids)}`)[0]!
        .n,
    ).toBe(5);
    await unscheduleRows(ctx, ids);
  });

  test("a claim's lease is LEASE_SLACK_SECONDS, whatever the courier budget (a live runner renews it), and at least 5 s", () => {
    const base = loadConfig({ COURIER_TIMEOUT_MS: "1000", COURIER_ASYNC_BUDGET_MS: "200000" });
    const short = loadConfig({ COURIER_TIMEOUT_MS: "1000", COURIER_ASYNC_BUDGET_MS: "2000", LEASE_SLACK_SECONDS: "1" });
    expect(defaultLeaseMs(base)).toBe(30_000);
    expect(defaultLeaseMs(short)).toBe(MIN_RECHECK_LEASE_MS);
    expect(MIN_RECHECK_LEASE_MS).toBe(5_000);
  });

  test("a live runner renews the leases of the rows it holds; a killed one's rows are claimable again within one lease slack", async () => {
    await unscheduleRows(ctx);
    // Digit 5: the courier never answers in time, so one call runs and the other rows wait in the lane.
    const held = Array.from({ length: 10 }, (_, i) => ["delhivery", `7${String(i).padStart(11, "0")}5`] as const);
    const dead = Array.from({ length: 3 }, (_, i) => ["bluedart", `7${String(i).padStart(8, "0")}1`] as const);
    await seedMany(ctx, growth.id, [...held, ...dead]);
    const t0 = ctx.clock.now();
    const slack = defaultLeaseMs(ctx.config);
    // The killed process: it claimed the bluedart rows and will never renew or record anything.
    const killed = await claimDueShipments(ctx.tdb.db, t0, 1000, slack, "killed", { excludeCouriers: ["delhivery"] });
    expect(killed.map((r) => r.tracking_number).sort()).toEqual(dead.map(([, n]) => n).sort());

    const alive = createRecheckRunner(ctx.deps, { perCourierConcurrency: 1, owner: "alive", random: () => 0.5 });
    expect(alive.leaseMs).toBe(slack);
    const drained = alive.drain();
    const leases = async (owner: string) =>
      (
        await ctx.tdb
          .sql`select (extract(epoch from lease_until) * 1000)::float8 as until from recheck_schedule where lease_owner = ${owner}`
      ).map((r) => r.until as number);
    try {
      // A claim holds a row for one slack, not for the worst case of a full lane behind a slow courier.
      expect(await eventually(async () => (await leases("alive")).length >= 8)).toBe(true);
      const first = await leases("alive");
      expect(first.length).toBeGreaterThanOrEqual(8);
      expect(new Set(first)).toEqual(new Set([t0 + slack]));

      ctx.clock.advance(20_000);
      await alive.renew();
      const renewed = await leases("alive");
      expect(renewed.length).toBeGreaterThanOrEqual(8);
      expect(new Set(renewed)).toEqual(new Set([t0 + 20_000 + slack]));

      // One slack after the claims: the killed process's rows are claimable, the live runner's are not.
      ctx.clock.advance(slack - 20_000 + 1_000);
      const taken = await claimDueShipments(ctx.tdb.db, ctx.clock.now(), 1000, slack, "taker");
      expect(taken.map((r) => r.tracking_number).sort()).toEqual(dead.map(([, n]) => n).sort());
    } finally {
      await alive.stop({ timeout: 5_000 });
      await drained;
      await unscheduleRows(ctx);
    }
  }, 30_000);
});

describe('chunk runs (docs/rechecks.md, "Re-checks in chunks")', () => {
  test("a run taken over after its runner died resumes after the cursor; the chunk is then due one interval after the run ended", async () => {
    const numbers: [string, string][] = [];
    for (let i = 0; i < 120; i++) numbers.push(["delhivery", `9${String(i).padStart(11, "0")}7`]);
    const ids = await seedMany(ctx, growth.id, numbers);
    const sql = ctx.tdb.sql;
    const t0 = ctx.clock.now();
    await sql`delete from recheck_chunks`;
    const [c] =
      await sql`insert into recheck_chunks (courier, due_at) values ('delhivery', ${new Date(t0).toISOString()})
      returning id::float8 as id`;
    await sql`update recheck_schedule set chunk_id = ${c!.id as number}, due_at = null where shipment_id in ${sql(ids)}`;
    const inOrder = (
      await sql`select shipment_id from recheck_schedule where chunk_id = ${c!.id as number} order by shipment_id`
    ).map((r) => r.shipment_id as string);
    const chunk = async () =>
      (await sql`select cursor, lease_owner, due_at, last_run_at from recheck_chunks where id = ${c!.id as number}`)[0];
    try {
      const dead = new ChunkWalk(ctx.tdb.db, "dead", { intervalMs: 60_000 });
      const first = await dead.claim(t0, 80, 30_000, []);
      expect(first.map((m) => m.id)).toEqual(inOrder.slice(0, 80));
      for (const m of first.slice(0, 60)) await dead.finish(m, true);
      // The cursor is written every CURSOR_EVERY members, not per member.
      expect(await chunk()).toMatchObject({ cursor: inOrder[CURSOR_EVERY - 1], lease_owner: "dead" });

      // While its lease holds no one else runs the chunk.
      const ended = t0 + 40_000;
      const live = new ChunkWalk(ctx.tdb.db, "live", { intervalMs: 60_000, random: () => 0.5, now: () => ended });
      expect(await live.claim(t0 + 1_000, 200, 30_000, [])).toEqual([]);
      // After it: the run resumes after the cursor, and ends.
      const rest = await live.claim(t0 + 31_000, 200, 30_000, []);
      expect(rest.map((m) => m.id)).toEqual(inOrder.slice(CURSOR_EVERY));
      for (const m of rest) await live.finish(m, true);
      const done = await chunk();
      expect(done).toMatchObject({ cursor: null, lease_owner: null });
      // The members' check time is the start of the run (the dead runner's); the next run is one interval after
      // this one ended, so a member re-checked late in it is not re-checked sooner than an interval later.
      expect(new Date(done!.last_run_at).getTime()).toBe(t0);
      expect(new Date(done!.due_at).getTime()).toBe(ended + 60_000);
      expect(await live.claim(t0 + 31_000, 200, 30_000, [])).toEqual([]);
    } finally {
      await unscheduleRows(ctx, ids);
      await sql`delete from recheck_chunks`;
    }
  });

  test("a chunk whose members all left is deleted by the run that finds it empty", async () => {
    const sql = ctx.tdb.sql;
    const t0 = ctx.clock.now();
    await sql`delete from recheck_chunks`;
    await sql`insert into recheck_chunks (courier, due_at) values ('delhivery', ${new Date(t0).toISOString()})`;
    const walk = new ChunkWalk(ctx.tdb.db, "w", { intervalMs: 60_000 });
    expect(await walk.claim(t0, 100, 30_000, [])).toEqual([]);
    expect((await sql`select count(*)::int as n from recheck_chunks`)[0]!.n).toBe(0);
  });
});
