/**
 * The re-check schedule at layout level 2 (docs/rechecks.md, "Re-checks in chunks"): a re-check that finds nothing
 * new writes nothing per shipment (its chunk's run moves the chunk's due time); a database migrated from 1.0.0 and
 * not yet contracted keeps `recheck_queue` and `shipments.last_checked_at` as 1.0.0 did, and the contract step
 * moves the schedule over.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdmin } from "../../src/cli/commands.ts";
import { loadConfig } from "../../src/configure.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
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
  const [r] = await sql`
    select r.xmin::text || ' ' || r.ctid::text as c, r.chunk_id, coalesce(r.due_at, c.due_at) as due_at,
      greatest(r.checked_at, case when r.due_at is null then c.last_run_at end) as checked_at,
      coalesce(r.lease_owner, c.lease_owner) as lease_owner, c.cursor
    from recheck_schedule r left join recheck_chunks c on c.id = r.chunk_id where r.shipment_id = ${s!.id}`;
  const [q] = await sql`select due_at, lease_owner from recheck_queue where shipment_id = ${s!.id}`;
  return {
    id: s!.id as string,
    version: `${s!.x} ${s!.c}`,
    lastCheckedAt: ms(s!.last_checked_at),
    schedule: r
      ? {
          version: r.c as string,
          chunk: r.chunk_id as string | null,
          due: ms(r.due_at)!,
          checked: ms(r.checked_at),
          owner: r.lease_owner,
          cursor: r.cursor as string | null,
        }
      : null,
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
  test("a no-change re-check writes no row of the shipment: its chunk's run moves the chunk's due time", async () => {
    const n = "1234567000121";
    await track(ctx, growth.key, "delhivery", n);
    const before = await stateOf(n);
    expect(before.queue).toBeNull();
    // The lookup counts as a re-check: the shipment joined a chunk due one interval (± 10 %) on.
    expect(before.schedule!.chunk).not.toBeNull();
    expect(before.schedule!.due).toBeGreaterThanOrEqual(ctx.clock.now() + 540_000);
    expect(before.schedule!.due).toBeLessThanOrEqual(ctx.clock.now() + 660_000);

    for (let round = 0; round < 2; round++) {
      ctx.clock.advance(700_000);
      const now = ctx.clock.now();
      const stats = await runRecheckBatch(ctx.deps);
      expect(stats).toMatchObject({ claimed: 1, unchanged: 1, changed: 0 });
      const after = await stateOf(n);
      // Same row versions: nothing wrote the shipment or its schedule row.
      expect(after.version).toBe(before.version);
      expect(after.lastCheckedAt).toBe(before.lastCheckedAt);
      expect(after.schedule!.version).toBe(before.schedule!.version);
      // The chunk's run: checked when it began, due an interval (± 10 %) on, lease and cursor gone.
      expect(after.schedule!.checked).toBe(now);
      expect(after.schedule!.owner).toBeNull();
      expect(after.schedule!.cursor).toBeNull();
      expect(after.schedule!.due).toBeGreaterThanOrEqual(now + 540_000);
      expect(after.schedule!.due).toBeLessThanOrEqual(now + 660_000);
      expect(after.queue).toBeNull();
      // Readers take the next check from the chunk.
      const [res, listed] = await ctx.call("/v1/shipments", { key: growth.key });
      expect(res.status).toBe(200);
      expect(
        listed.data.shipments.find((s: { tracking_number: string }) => s.tracking_number === n)?.next_check_at,
      ).toBe(iso(after.schedule!.due));
    }
    await unscheduleRows(ctx, [before.id]);
  });

  test("a failing member leaves its chunk's time for its back-off and rejoins a chunk on its next success", async () => {
    const n = "1234567000141";
    await track(ctx, growth.key, "delhivery", n);
    const joined = await stateOf(n);
    ctx.clock.advance(700_000);
    // Live mode without credentials: the backend is unavailable, a retryable failure.
    const backends = createCourierBackends({
      config: loadConfig({ COURIER_MODE: "live" }),
      clock: ctx.clock,
      log: silentLogger,
    });
    try {
      expect(await runRecheckBatch({ ...ctx.deps, backends })).toMatchObject({ claimed: 1, failed: 1 });
    } finally {
      await backends.close();
    }
    const failed = await stateOf(n);
    const [own] = await ctx.tdb.sql`select due_at, failures from recheck_schedule where shipment_id = ${joined.id}`;
    expect(own!.failures).toBe(1);
    expect(ms(own!.due_at)).toBe(failed.schedule!.due);
    expect(own!.due_at).not.toBeNull();

    ctx.clock.advance(failed.schedule!.due - ctx.clock.now());
    const now = ctx.clock.now();
    expect(await runRecheckBatch(ctx.deps)).toMatchObject({ claimed: 1, unchanged: 1 });
    const back = await stateOf(n);
    const [row] = await ctx.tdb.sql`select due_at, failures from recheck_schedule where shipment_id = ${joined.id}`;
    expect(row).toMatchObject({ due_at: null, failures: 0 });
    expect(back.schedule!.chunk).not.toBeNull();
    expect(back.schedule!.checked).toBe(now);
    expect(back.schedule!.due).toBeGreaterThanOrEqual(now + 540_000);
    expect(back.schedule!.due).toBeLessThanOrEqual(now + 660_000);
    await unscheduleRows(ctx, [joined.id]);
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
