/**
 * The monthly quota leased in blocks (src/modules/accounts/quota-lease.ts): exact across pools (each pool
 * stands in for one replica), blocks that shrink to one unit near the end, units given back.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { addUsage, lockUsage, periodOf, usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { dayOf, usageByDay } from "../../src/modules/accounts/quota-days.ts";
import { LEASE_MAX } from "../../src/modules/accounts/quota-lease.ts";
import {
  idlePeriodMs,
  LEASE_IDLE_GAPS,
  LEASE_IDLE_MAX_MS,
  LEASE_IDLE_MS,
} from "../../src/modules/accounts/quota-pace.ts";
import { quotaLeasesFor } from "../helpers/services.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";
import { eventually } from "../helpers/eventually.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

/** Three independent pools on the test database: three replicas. */
async function withReplicas<T>(fn: (pools: ReturnType<typeof connect>["db"][]) => Promise<T>): Promise<T> {
  const extra = [connect(ctx.tdb.url, { max: 5 }), connect(ctx.tdb.url, { max: 5 })];
  try {
    return await fn([ctx.tdb.db, ...extra.map((c) => c.db)]);
  } finally {
    await Promise.all(extra.map((c) => quotaLeasesFor(c.db).returnAll()));
    await Promise.all(extra.map((c) => c.sql.end()));
  }
}

/** The account's `usage_daily` rows of the month of `ms`, summed. */
async function daysSum(accountId: string, ms: number): Promise<number> {
  const [r] = await ctx.tdb.sql<
    { n: number }[]
  >`select coalesce(sum(used), 0)::int as n from usage_daily where account_id = ${accountId} and to_char(day, 'YYYY-MM') = ${periodOf(ms)}`;
  return r!.n;
}

describe("quota blocks", () => {
  test("a large remainder is leased in blocks: one statement for many units, unused units go back when idle", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    const leases = quotaLeasesFor(ctx.tdb.db);
    const used: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await leases.reserve(a.id, 500_000, now);
      expect(r.ok).toBe(true);
      used.push(r.used);
    }
    expect(used).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The row counts the whole block while this process holds it…
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX);
    // …and only what was used once the block has been idle.
    await leases.returnIdle(Date.now() + LEASE_IDLE_MS);
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(10);
    expect((await leases.reserve(a.id, 500_000, now)).used).toBe(11);
    await leases.returnAll();
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(11);
  });

  test("the idle period follows the account's pace: 3 × its longest recent gap, within 1–30 s", () => {
    expect(idlePeriodMs(0)).toBe(LEASE_IDLE_MS);
    expect(idlePeriodMs(2_000)).toBe(LEASE_IDLE_GAPS * 2_000);
    expect(idlePeriodMs(60_000)).toBe(LEASE_IDLE_MAX_MS);
  });

  test("an account asking every half second keeps its block past 1 s idle; it goes back after its longer idle period", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    const leases = quotaLeasesFor(ctx.tdb.db);
    // The leases pace by the system clock: set by hand here, so the gap is exactly half a second.
    const t0 = Date.now();
    setSystemTime(t0);
    try {
      expect((await leases.reserve(a.id, 500_000, now)).used).toBe(1);
      setSystemTime(t0 + 500);
      // Taken from the block held (no statement): the gap since the first request is 500 ms.
      expect((await leases.reserve(a.id, 500_000, now)).used).toBe(2);
      // 1.2 s after the second request: past the shortest idle period, inside this account's (1.5 s).
      await leases.returnIdle(t0 + 500 + LEASE_IDLE_MS + 200);
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX);
      await leases.returnIdle(t0 + 500 + LEASE_IDLE_MAX_MS);
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(2);
    } finally {
      setSystemTime();
    }
  });

  test("a unit given back goes to the row: the row ends exact, the block goes on", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    const leases = quotaLeasesFor(ctx.tdb.db);
    const first = await leases.reserve(a.id, 500_000, now);
    await leases.release(a.id, first);
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX - 1);
    // One unit counted: the one given back is not in `used` any more.
    expect((await leases.reserve(a.id, 500_000, now)).used).toBe(1);
    await leases.returnAll();
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(1);
  });

  test("600 parallel reservations over three replicas with 300 units left → exactly 300, the row at the quota", async () => {
    const a = await ctx.account("pro");
    const now = ctx.clock.now();
    await setUsage(ctx.tdb.db, a.id, 50_000 - 300, now);
    const results = await withReplicas((pools) =>
      Promise.all(Array.from({ length: 600 }, (_, i) => quotaLeasesFor(pools[i % 3]!).reserve(a.id, 50_000, now))),
    );
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(300);
    expect(new Set(ok.map((r) => r.used)).size).toBe(300);
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(50_000);
  });

  test("the month's row created by another replica between our two statements: still granted", async () => {
    const a = await ctx.account("starter");
    const now = ctx.clock.now();
    // Another replica's transaction has inserted the month's row but not committed yet: our grant sees no row,
    // and our own insert waits for theirs, then finds the row there.
    const other = connect(ctx.tdb.url, { max: 1 });
    try {
      let pending: Promise<unknown> | undefined;
      await other.sql.begin(async (tx) => {
        await tx`insert into usage_counters (account_id, period, used) values (${a.id}, '2026-11', 0)`;
        pending = Promise.resolve(quotaLeasesFor(ctx.tdb.db).reserve(a.id, 5_000, now));
        // Our grant has run once our insert waits on theirs (a lock wait in pg_stat_activity).
        const waiting = async () =>
          (
            await ctx.tdb.sql`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and query like 'insert into usage_counters%'`
          )[0]!.n > 0;
        expect(await eventually(waiting)).toBe(true);
      });
      expect(await pending).toMatchObject({ ok: true, used: 1 });
    } finally {
      await other.sql.end();
    }
    await quotaLeasesFor(ctx.tdb.db).returnAll();
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(1);
  });

  test("a refusal reports the row's count", async () => {
    const a = await ctx.account("free");
    const now = ctx.clock.now();
    await setUsage(ctx.tdb.db, a.id, 100, now);
    expect(await quotaLeasesFor(ctx.tdb.db).reserve(a.id, 100, now)).toEqual({
      ok: false,
      used: 100,
      period: "2026-11",
      day: new Date(now).toISOString().slice(0, 10),
    });
  });

  test("blocks across replicas never overlap and never pass the quota; what they did not use goes back", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    await setUsage(ctx.tdb.db, a.id, 500_000 - 3_000, now);
    const results = await withReplicas(async (pools) => {
      const all = await Promise.all(
        Array.from({ length: 4_500 }, (_, i) => quotaLeasesFor(pools[i % 3]!).reserve(a.id, 500_000, now)),
      );
      await Promise.all(pools.map((p) => quotaLeasesFor(p).returnAll()));
      return all;
    });
    const ok = results.filter((r) => r.ok);
    // Each unit granted once: no two answers carry the same count.
    expect(new Set(ok.map((r) => r.used)).size).toBe(ok.length);
    expect(ok.length).toBeLessThanOrEqual(3_000);
    // At most one block per replica (≤ 3 units at this remainder) can have been held unused when the row ran out.
    expect(ok.length).toBeGreaterThanOrEqual(3_000 - 3 * 2);
    expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(500_000 - 3_000 + ok.length);
    expect(await daysSum(a.id, now)).toBe(500_000 - 3_000 + ok.length);
  });

  test("a new month starts a new block and gives the old month's unused units back; quota 0 reserves nothing", async () => {
    const a = await ctx.account("business");
    const nov = Date.UTC(2026, 10, 30, 23, 59, 0);
    const dec = Date.UTC(2026, 11, 1, 0, 0, 1);
    const leases = quotaLeasesFor(ctx.tdb.db);
    expect((await leases.reserve(a.id, 500_000, nov)).used).toBe(1);
    const r = await leases.reserve(a.id, 500_000, dec);
    expect(r).toEqual({ ok: true, used: 1, period: "2026-12", day: "2026-12-01" });
    expect(await usedThisMonth(ctx.tdb.db, a.id, nov)).toBe(1);
    await leases.returnAll();
    expect(await usedThisMonth(ctx.tdb.db, a.id, dec)).toBe(1);
    expect([await daysSum(a.id, nov), await daysSum(a.id, dec)]).toEqual([1, 1]);
    expect((await leases.reserve(a.id, 0, dec)).ok).toBe(false);
  });

  test("periodOf is the UTC calendar month of any instant, asked in any order (it remembers the last month)", () => {
    const instants = [
      Date.UTC(2026, 10, 30, 23, 59, 59, 999),
      Date.UTC(2026, 11, 1),
      Date.UTC(2026, 10, 30, 23, 59, 59, 999),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
      Date.UTC(2028, 1, 29, 12),
      Date.UTC(2026, 11, 1) - 1,
    ];
    for (const ms of instants) expect(periodOf(ms)).toBe(new Date(ms).toISOString().slice(0, 7));
  });

  test("units a failed give-back could not return are sent again with the next one", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    // A replica whose statements give up after 300 ms waiting for a row lock.
    const dbName = String((await ctx.tdb.sql`select current_database() as db`)[0]!.db);
    await ctx.tdb.sql.unsafe(`alter database "${dbName}" set lock_timeout = '300ms'`);
    const replica = connect(ctx.tdb.url, { max: 1 });
    const holder = connect(ctx.tdb.url, { max: 1 });
    try {
      await replica.sql`select 1`;
      await ctx.tdb.sql.unsafe(`alter database "${dbName}" reset lock_timeout`);
      const leases = quotaLeasesFor(replica.db);
      expect((await leases.reserve(a.id, 500_000, now)).used).toBe(1);
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX);
      // Someone holds the row: the give-back times out, and its units are kept.
      let unlock!: () => void;
      const locked = new Promise<void>((r) => (unlock = r));
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      const tx = holder.sql.begin(async (t) => {
        await t`select used from usage_counters where account_id = ${a.id} for update`;
        held();
        await locked;
      });
      await holding;
      await expect(leases.returnAll()).rejects.toThrow();
      unlock();
      await tx;
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX);
      await leases.returnIdle();
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(1);
    } finally {
      await ctx.tdb.sql.unsafe(`alter database "${dbName}" reset lock_timeout`);
      await Promise.all([replica.sql.end(), holder.sql.end()]);
    }
  });
});

describe("usage in an answer", () => {
  test("lookup, bulk follow of one item, lookup → used 1 then 3: units counted by any path of this process", async () => {
    const a = await ctx.account("growth");
    const [, first] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key: a.key });
    expect(first.usage.used).toBe(1);
    const [res, follow] = await ctx.call("/v1/shipments", {
      method: "POST",
      key: a.key,
      body: JSON.stringify({ shipments: [{ courier: "delhivery", tracking_number: "1234567890130" }] }),
    });
    expect(res.status).toBe(202);
    expect(follow.data.counted).toBe(1);
    const [, second] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key: a.key });
    expect(second.usage).toMatchObject({ used: 3, plan: "growth" });
    // A lookup that fails gives its unit back: the next answer does not count it.
    const [bad] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890126", { key: a.key });
    expect(bad.status).not.toBe(200);
    const [, third] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key: a.key });
    expect(third.usage.used).toBe(4);
    await quotaLeasesFor(ctx.tdb.db).returnAll();
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(4);
  });

  test("two replicas: each answer has every unit its own process counted; off only by what the other holds or counted since", async () => {
    const a = await ctx.account("business");
    const now = ctx.clock.now();
    const period = periodOf(now);
    const other = connect(ctx.tdb.url, { max: 2 });
    const A = quotaLeasesFor(ctx.tdb.db);
    const B = quotaLeasesFor(other.db);
    try {
      expect((await A.reserve(a.id, 500_000, now)).used).toBe(1);
      expect((await A.reserve(a.id, 500_000, now)).used).toBe(2);
      // B's block starts after A's: B's answer includes the LEASE_MAX − 2 units A holds unused.
      expect((await B.reserve(a.id, 500_000, now)).used).toBe(3 + (LEASE_MAX - 2));
      // A has not touched the row since: B's one unit is not in A's answer yet.
      expect((await A.reserve(a.id, 500_000, now)).used).toBe(3);
      await B.returnAll();
      // A bulk follow through A (one unit, counted under the row lock) brings A up to date with the row.
      await A.counting(a.id, period, () =>
        ctx.tdb.sql.begin(async (tx) => {
          const used = await lockUsage(tx, a.id, period);
          await addUsage(tx, a.id, period, dayOf(now), 1);
          return { used: used + 1, value: undefined };
        }),
      );
      // 3 lookups through A, 1 through B, 1 follow: exact once B holds nothing.
      expect(A.usedNow(a.id, period)).toBe(5);
      expect((await A.reserve(a.id, 500_000, now)).used).toBe(6);
      await A.returnAll();
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(6);
    } finally {
      await B.returnAll();
      await other.sql.end();
    }
  });
});

describe("give-backs through an outage", () => {
  test("units given back while the database is cut are summed per account and month: the row equals the units used", async () => {
    const a = await ctx.account("business");
    const b = await ctx.account("business");
    const now = ctx.clock.now();
    const relay = startPgRelay(ctx.tdb.url);
    const replica = connect(relay.url, { max: 2 });
    const leases = quotaLeasesFor(replica.db);
    try {
      const ra = await Promise.all(Array.from({ length: 6 }, () => leases.reserve(a.id, 500_000, now)));
      const rb = await Promise.all(Array.from({ length: 3 }, () => leases.reserve(b.id, 500_000, now)));
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(LEASE_MAX);
      relay.stop();
      // Four of a's requests and one of b's fail while the database is gone: their units cannot go back now.
      for (const r of ra.slice(0, 4)) await expect(leases.release(a.id, r)).rejects.toThrow();
      await expect(leases.release(b.id, rb[0]!)).rejects.toThrow();
      expect(leases.usedNow(a.id, periodOf(now))).toBe(2);
      expect(leases.usedNow(b.id, periodOf(now))).toBe(2);
      await expect(leases.returnAll()).rejects.toThrow();
      relay.start();
      await leases.returnIdle();
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(2);
      expect(await usedThisMonth(ctx.tdb.db, b.id, now)).toBe(2);
      expect([await daysSum(a.id, now), await daysSum(b.id, now)]).toEqual([2, 2]);
    } finally {
      relay.stop();
      await replica.sql.end({ timeout: 1 });
    }
  });
});

describe("usage by day", () => {
  test("lookups, give-backs, a bulk follow and a correction over four days: each day counts its grants, the days sum to the month", async () => {
    const a = await ctx.account("business");
    const day1 = Date.UTC(2026, 10, 3, 23, 59, 0);
    const day2 = day1 + 120_000;
    const day4 = day1 + 2 * 86_400_000 + 120_000;
    const period = periodOf(day1);
    // The idle sweeper reads the system clock: held still, a loaded machine cannot return A's block between calls.
    setSystemTime(Date.now());
    await withReplicas(async ([p1, p2, p3]) => {
      const [A, B] = [quotaLeasesFor(p1!), quotaLeasesFor(p2!)];
      const onDay1 = await Promise.all(Array.from({ length: 5 }, () => A.reserve(a.id, 500_000, day1)));
      await B.reserve(a.id, 500_000, day1);
      // A's block of day 1 serves day 2 too (its units count on day 1); B's idle units go back to day 1.
      const late = await A.reserve(a.id, 500_000, day2);
      expect(late.day).toBe("2026-11-03");
      await A.release(a.id, onDay1[0]!);
      await B.returnAll();
      await A.returnAll();
      // A new block on day 2, then a bulk follow of 3 items through a third replica.
      await A.reserve(a.id, 500_000, day2);
      await A.returnAll();
      const C = quotaLeasesFor(p3!);
      await C.counting(a.id, period, () =>
        ctx.tdb.sql.begin(async (tx) => {
          const used = await lockUsage(tx, a.id, period);
          await addUsage(tx, a.id, period, dayOf(day4), 3);
          return { used: used + 3, value: undefined };
        }),
      );
    }).finally(() => setSystemTime());
    const byDay = (await usageByDay(ctx.tdb.db, a.id, day4)).filter((d) => d.used !== 0);
    // Nov 3: 5 from A, 1 from B, 1 late unit of A's block, 1 given back. Nov 4: 1. Nov 6: the 3 follows.
    expect(byDay).toEqual([
      { day: "2026-11-03", used: 6 },
      { day: "2026-11-04", used: 1 },
      { day: "2026-11-06", used: 3 },
    ]);
    expect(await usedThisMonth(ctx.tdb.db, a.id, day4)).toBe(10);
    expect(await daysSum(a.id, day4)).toBe(10);
    // A correction (operator CLI) lands on today's row: the days still sum to the month.
    await setUsage(ctx.tdb.db, a.id, 4, day4);
    expect(await usedThisMonth(ctx.tdb.db, a.id, day4)).toBe(4);
    expect(await daysSum(a.id, day4)).toBe(4);
  });

  test("usageByDay lists every day of the month up to today, zeros included", async () => {
    const a = await ctx.account("business");
    const days = await usageByDay(ctx.tdb.db, a.id, Date.UTC(2026, 1, 3, 12));
    expect(days).toEqual(["2026-02-01", "2026-02-02", "2026-02-03"].map((day) => ({ day, used: 0 })));
  });
});
