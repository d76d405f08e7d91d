/**
 * The re-check schedule at layout level 2 (docs/rechecks.md, "An append-only schedule"): a re-check that finds
 * nothing new writes nothing to `shipments` and moves its schedule row to the end of the table; a database
 * migrated from 1.0.0 and not yet contracted keeps `recheck_queue` and `shipments.last_checked_at` as 1.0.0 did,
 * and the contract step moves the schedule over.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdmin } from "../../src/cli/commands.ts";
import { forgetScheduleLayout } from "../../src/modules/following/layout.ts";
import { runRecheckBatch } from "../../src/modules/following/recheck.ts";
import { runHousekeeping } from "../../src/scheduler/housekeeping.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { track, unscheduleRows } from "./helpers.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "3600", RECHECK_INTERVAL_SECONDS: "600" });
  growth = await ctx.account("growth");
});
afterAll(() => ctx.close());

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (v: unknown) => (v == null ? null : new Date(v as string).getTime());

/** The shipment row's version and check time, and its row in each schedule (null: none). */
async function stateOf(n: string) {
  const sql = ctx.tdb.sql;
  const [s] =
    await sql`select id, xmin::text as x, ctid::text as c, last_checked_at from shipments where tracking_number = ${n}`;
  const [r] =
    await sql`select ctid::text as c, due_at, checked_at, lease_owner from recheck_schedule where shipment_id = ${s!.id}`;
  const [q] = await sql`select due_at, lease_owner from recheck_queue where shipment_id = ${s!.id}`;
  return {
    id: s!.id as string,
    version: `${s!.x} ${s!.c}`,
    lastCheckedAt: ms(s!.last_checked_at),
    schedule: r ? { ctid: r.c as string, due: ms(r.due_at)!, checked: ms(r.checked_at), owner: r.lease_owner } : null,
    queue: q ? { due: ms(q.due_at)!, owner: q.lease_owner } : null,
  };
}

async function setLevel(level: number) {
  await ctx.tdb.sql`
    insert into service_settings (name, value) values ('compat_level', ${String(level)})
    on conflict (name) do update set value = excluded.value`;
  forgetScheduleLayout(ctx.tdb.db);
}

describe("a contracted database (this build's, level 2)", () => {
  test("a no-change re-check leaves the shipment row as it was and re-appends its schedule row with the check time", async () => {
    const n = "1234567000121";
    await track(ctx, growth.key, "delhivery", n);
    const before = await stateOf(n);
    expect(before.queue).toBeNull();
    expect(before.schedule).not.toBeNull();
    ctx.clock.advance(700_000);
    const now = ctx.clock.now();

    const stats = await runRecheckBatch(ctx.deps);
    expect(stats).toMatchObject({ claimed: 1, unchanged: 1, changed: 0 });
    const after = await stateOf(n);
    // Same row version and place: nothing wrote the shipment.
    expect(after.version).toBe(before.version);
    expect(after.lastCheckedAt).toBe(before.lastCheckedAt);
    // The schedule row is a new one (deleted and appended), due an interval (± 10 %) on, with the check time.
    expect(after.schedule!.ctid).not.toBe(before.schedule!.ctid);
    expect(after.schedule!.checked).toBe(now);
    expect(after.schedule!.owner).toBeNull();
    expect(after.schedule!.due).toBeGreaterThanOrEqual(now + 540_000);
    expect(after.schedule!.due).toBeLessThanOrEqual(now + 660_000);
    expect(after.queue).toBeNull();
    // Readers take the next check from the schedule row.
    const [res, listed] = await ctx.call("/v1/shipments", { key: growth.key });
    expect(res.status).toBe(200);
    expect(listed.data.shipments.find((s: { tracking_number: string }) => s.tracking_number === n)?.next_check_at).toBe(
      iso(after.schedule!.due),
    );
    await unscheduleRows(ctx, [after.id]);
  });
});

describe("a database migrated from 1.0.0 (level 1 until contracted)", () => {
  test("keeps recheck_queue and last_checked_at current; after the contract step it re-checks from recheck_schedule", async () => {
    await setLevel(1);
    await ctx.tdb.sql`delete from recheck_schedule`;
    const n = "1234567000131";
    await track(ctx, growth.key, "delhivery", n);
    const first = await stateOf(n);
    expect(first.schedule).toBeNull();
    expect(first.queue).not.toBeNull();

    ctx.clock.advance(700_000);
    const checkedAt = ctx.clock.now();
    expect(await runRecheckBatch(ctx.deps)).toMatchObject({ claimed: 1, unchanged: 1 });
    const legacy = await stateOf(n);
    // As 1.0.0 did it: the check time on the shipment, the next due time in recheck_queue, nothing in the new table.
    expect(legacy.lastCheckedAt).toBe(checkedAt);
    expect(legacy.queue!.due).toBeGreaterThanOrEqual(checkedAt + 540_000);
    expect(legacy.schedule).toBeNull();

    // `admin contract`: the level rises and the schedule moves, due time and check time with it.
    expect(await runAdmin(ctx.tdb.db, "contract", { flags: {}, positionals: [] })).toMatchObject({
      compat_level: 2,
      previous: 1,
      schedule_rows_moved: 1,
    });
    const moved = await stateOf(n);
    expect(moved.queue).toBeNull();
    expect(moved.schedule).toMatchObject({ due: legacy.queue!.due, checked: checkedAt, owner: null });

    ctx.clock.advance(700_000);
    const now = ctx.clock.now();
    expect(await runRecheckBatch(ctx.deps)).toMatchObject({ claimed: 1, unchanged: 1 });
    const contracted = await stateOf(n);
    expect(contracted.version).toBe(moved.version);
    expect(contracted.lastCheckedAt).toBe(checkedAt);
    expect(contracted.schedule!.checked).toBe(now);
    expect(contracted.queue).toBeNull();

    // A row an older process wrote in the seconds before it saw the new level is moved by housekeeping.
    await ctx.tdb.sql`delete from recheck_schedule where shipment_id = ${contracted.id}`;
    await ctx.tdb.sql`
      insert into recheck_queue (shipment_id, courier, tracking_number, due_at)
      values (${contracted.id}, 'delhivery', ${n}, ${iso(now + 1_000)})`;
    expect((await runHousekeeping(ctx.deps)).scheduleMoved).toBe(1);
    expect((await stateOf(n)).schedule).toMatchObject({ due: now + 1_000 });
    await unscheduleRows(ctx, [contracted.id]);
  });
});
