/**
 * `/v1/track`'s first statement (src/modules/tracking/reserve-read.ts): the
 * quota reservation and the stored-row read in one round trip. The row it
 * reads is the row Drizzle reads (dates as Date, checkpoints as objects, the
 * EDD as text), and the reservation stays exact under concurrency.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { findShipment } from "../../src/modules/tracking/store.ts";
import { reserveAndRead } from "../../src/modules/tracking/reserve-read.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

describe("reserveAndRead", () => {
  test("reads the stored row exactly as Drizzle does, with whether the account follows it", async () => {
    const acc = await ctx.account("growth");
    const other = await ctx.account("growth");
    const n = "1234567000131"; // in transit: the lookup makes the account follow it
    const [res] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${n}`, { key: acc.key });
    expect(res.status).toBe(200);
    await ctx.tdb.sql`update shipments set estimated_delivery = '2026-12-01' where tracking_number = ${n}`;
    const drizzleRow = (await findShipment(ctx.deps.db, "delhivery", n))!;
    expect(drizzleRow.checkpoints.length).toBeGreaterThan(0);
    expect(drizzleRow.lastCheckedAt).toBeInstanceOf(Date);

    const mine = await reserveAndRead(ctx.deps.db, acc.id, 1000, ctx.clock.now(), "delhivery", n);
    expect(mine.reservation.ok).toBe(true);
    expect(mine.stored).toEqual({ ...drizzleRow, following: true });
    const theirs = await reserveAndRead(ctx.deps.db, other.id, 1000, ctx.clock.now(), "delhivery", n);
    expect(theirs.stored).toEqual({ ...drizzleRow, following: false });
  });

  test("a shipment not stored yet reads as null; the unit is reserved all the same", async () => {
    const acc = await ctx.account("growth");
    const r = await reserveAndRead(ctx.deps.db, acc.id, 1000, ctx.clock.now(), "delhivery", "1234567999990");
    expect(r).toEqual({ reservation: { ok: true, used: 1, period: expect.any(String) }, stored: null });
    expect(await usedThisMonth(ctx.deps.db, acc.id, ctx.clock.now())).toBe(1);
  });

  test("exact under concurrency: with 5 units left of 8 and 40 at once, exactly 5 are reserved and nothing is read for the others", async () => {
    const acc = await ctx.account("growth");
    for (let i = 0; i < 3; i++) expect((await reserveAndRead(ctx.deps.db, acc.id, 8, ctx.clock.now(), "delhivery", "1234567000140")).reservation.ok).toBe(true);
    const all = await Promise.all(Array.from({ length: 40 }, () => reserveAndRead(ctx.deps.db, acc.id, 8, ctx.clock.now(), "delhivery", "1234567000140")));
    const ok = all.filter((r) => r.reservation.ok);
    expect(ok.length).toBe(5);
    expect(ok.map((r) => r.reservation.used).sort((a, b) => a - b)).toEqual([4, 5, 6, 7, 8]);
    const refused = all.filter((r) => !r.reservation.ok);
    expect(refused.every((r) => r.reservation.used === 8 && r.stored === undefined)).toBe(true);
    expect(await usedThisMonth(ctx.deps.db, acc.id, ctx.clock.now())).toBe(8);
  });

  test("a plan without quota reserves nothing", async () => {
    const acc = await ctx.account("growth");
    const r = await reserveAndRead(ctx.deps.db, acc.id, 0, ctx.clock.now(), "delhivery", "1234567000140");
    expect(r.reservation.ok).toBe(false);
    expect(await usedThisMonth(ctx.deps.db, acc.id, ctx.clock.now())).toBe(0);
  });
});
