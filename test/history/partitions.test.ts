/**
 * Partitioned history (migration 0022, docs/capacity.md "Partitioned history"): weekly partitions of events,
 * deliveries and delivery_attempts, created ahead and dropped whole past RETENTION_DAYS by housekeeping.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { runHousekeeping } from "../../src/scheduler/housekeeping.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { seedMany } from "../following/helpers.ts";

let ctx: TestContext;
let acc: { id: string };
let whId: string;
let shp: string;
beforeAll(async () => {
  ctx = await testContext({ RETENTION_DAYS: "30" });
  acc = await ctx.account("growth");
  whId = newId("wh");
  await ctx.tdb.db.insert(webhooks).values({
    id: whId,
    accountId: acc.id,
    url: "https://hooks.example.com/p",
    events: ["tracking.updated"],
    mode: "live",
  });
  [shp] = (await seedMany(ctx, acc.id, [["delhivery", "4234567890111"]])) as [string];
});
afterAll(() => ctx.close());

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const HISTORY = ["events", "deliveries", "delivery_attempts"];

async function event(at: number): Promise<string> {
  const id = newId("evt");
  await ctx.tdb
    .sql`insert into events (id, shipment_id, type, status, enqueued_at, created_at) values (${id}, ${shp}, 'tracking.updated', 'in_transit', ${iso(at)}, ${iso(at)})`;
  return id;
}
async function delivery(eventId: string, at: number, state: string, whereTo = whId): Promise<string> {
  const id = newId("dlv");
  await ctx.tdb
    .sql`insert into deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, created_at, updated_at)
    values (${id}, ${whereTo}, ${acc.id}, ${eventId}, ${shp}, 'tracking.updated', 'live', ${state}, 1, ${state === "pending" ? iso(at) : null}, ${iso(at)}, ${iso(at)}, ${iso(at)})`;
  await ctx.tdb
    .sql`insert into delivery_attempts (id, delivery_id, webhook_id, attempt, url, started_at, duration_ms, status_code) values (${newId("att")}, ${id}, ${whereTo}, 1, 'https://hooks.example.com/p', ${iso(at)}, 5, 200)`;
  return id;
}
const partitions = async (parent: string) =>
  (
    await ctx.tdb
      .sql`select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ${parent}::regclass order by 1`
  ).map((r) => r.relname as string);
const exists = async (table: string, id: string) =>
  (await ctx.tdb.sql.unsafe(`select 1 from ${table} where id = $1`, [id])).length === 1;

describe("partitioned history", () => {
  test("on a fresh database the three history tables are partitioned by week, with a DEFAULT partition and weeks ahead", async () => {
    const rows = await ctx.tdb
      .sql`select relname, relkind, pg_get_partkeydef(oid) as key from pg_class where relname in ${ctx.tdb.sql(HISTORY)} order by relname`;
    expect(rows.map((r) => [r.relname, r.relkind, r.key])).toEqual([
      ["deliveries", "p", "RANGE (created_at)"],
      ["delivery_attempts", "p", "RANGE (started_at)"],
      ["events", "p", "RANGE (created_at)"],
    ]);
    for (const t of HISTORY) {
      const parts = await partitions(t);
      expect(parts).toContain(`${t}_default`);
      expect(parts.filter((p) => /_p\d{8}$/.test(p)).length).toBeGreaterThanOrEqual(4);
    }
  });

  test("housekeeping creates the coming weeks and drops a week whole once it ends before now − RETENTION_DAYS", async () => {
    const t0 = Date.UTC(2027, 2, 3, 12); // Wednesday of the week 2027-03-01
    ctx.clock.set(t0);
    const first = await runHousekeeping(ctx.deps);
    for (const w of ["20270301", "20270308", "20270315", "20270322"])
      for (const t of HISTORY) expect(first.partitionsCreated).toContain(`${t}_p${w}`);
    const eOld = await event(t0);
    const dOld = await delivery(eOld, t0, "delivered");
    const eNext = await event(t0 + 6 * DAY); // week 2027-03-08
    const dNextFinal = await delivery(eNext, t0 + 6 * DAY, "delivered");
    const dNextPending = await delivery(eNext, t0 + 6 * DAY, "pending");
    expect((await ctx.tdb.sql`select tableoid::regclass::text as p from events where id = ${eOld}`)[0]!.p).toBe(
      "events_p20270301",
    );

    // Cutoff 2027-03-10 12:00: the week of 03-01 ended before it and goes whole; the week of 03-08 holds the
    // cutoff and waits, though eNext (03-09) is past retention.
    ctx.clock.set(t0 + 37 * DAY);
    const second = await runHousekeeping(ctx.deps);
    expect(second.partitionsDropped.sort()).toEqual([
      "deliveries_p20270301",
      "delivery_attempts_p20270301",
      "events_p20270301",
    ]);
    expect(await exists("events", eOld)).toBe(false);
    expect(await exists("deliveries", dOld)).toBe(false);
    expect(await exists("events", eNext)).toBe(true);
    expect(await exists("deliveries", dNextFinal)).toBe(true);

    // Cutoff 2027-03-18 12:00: the week of 03-08 ended; its outbox week holds a pending row, so it stays and its
    // final rows go row by row; events and attempts of that week go whole.
    ctx.clock.set(t0 + 45 * DAY);
    const third = await runHousekeeping(ctx.deps);
    expect(third.partitionsDropped.sort()).toEqual(["delivery_attempts_p20270308", "events_p20270308"]);
    expect(third.deliveries).toBe(1);
    expect(await exists("deliveries", dNextFinal)).toBe(false);
    expect(await exists("deliveries", dNextPending)).toBe(true);
    expect(await partitions("deliveries")).toContain("deliveries_p20270308");

    // Once that row is final and past retention, the week goes.
    await ctx.tdb.sql`update deliveries set state = 'abandoned', next_attempt_at = null where id = ${dNextPending}`;
    const fourth = await runHousekeeping(ctx.deps);
    expect(fourth.partitionsDropped).toEqual(["deliveries_p20270308"]);
    expect(await exists("deliveries", dNextPending)).toBe(false);
  });

  test("a row beyond the last partition lands in DEFAULT, its week gets no partition, and it goes at the exact cutoff", async () => {
    const far = Date.UTC(2031, 0, 1, 12); // the week of 2030-12-30
    const e = await event(far);
    expect((await ctx.tdb.sql`select tableoid::regclass::text as p from events where id = ${e}`)[0]!.p).toBe(
      "events_default",
    );
    ctx.clock.set(far - DAY);
    const r = await runHousekeeping(ctx.deps);
    expect(r.partitionsCreated).not.toContain("events_p20301230");
    expect(r.partitionsCreated).toContain("events_p20310106");
    expect(r.partitionsCreated).toContain("deliveries_p20301230");
    ctx.clock.set(far + 30 * DAY - 60_000);
    await runHousekeeping(ctx.deps);
    expect(await exists("events", e)).toBe(true);
    ctx.clock.set(far + 30 * DAY + 60_000);
    expect((await runHousekeeping(ctx.deps)).events).toBe(1);
    expect(await exists("events", e)).toBe(false);
  });

  test("a week whose lock a long reader holds is left for the next run; housekeeping does not fail", async () => {
    const t0 = Date.UTC(2032, 5, 2, 12); // Wednesday of the week 2032-05-31
    ctx.clock.set(t0);
    await runHousekeeping(ctx.deps);
    const e = await event(t0);
    const reader = await ctx.tdb.sql.reserve();
    try {
      await reader`begin`;
      await reader`select count(*) from events_p20320531`;
      ctx.clock.set(t0 + 40 * DAY);
      const r = await runHousekeeping(ctx.deps);
      expect(r.partitionsDropped).toContain("deliveries_p20320531");
      expect(r.partitionsDropped).not.toContain("events_p20320531");
      // Meanwhile its rows past retention go row by row (a delete takes no lock the reader holds).
      expect(r.events).toBe(1);
      expect(await exists("events", e)).toBe(false);
      await reader`commit`;
    } finally {
      reader.release();
    }
    expect(await partitions("events")).toContain("events_p20320531");
    expect((await runHousekeeping(ctx.deps)).partitionsDropped).toEqual(["events_p20320531"]);
  });

  test("keys stay unique within the partition key; removing a webhook removes its outbox rows, queue rows and attempts", async () => {
    const at = Date.now();
    const e = await event(at);
    const dup = ctx.tdb
      .sql`insert into events (id, shipment_id, type, status, enqueued_at, created_at) values (${e}, ${shp}, 'tracking.updated', 'in_transit', ${iso(at)}, ${iso(at)})`;
    await expect(dup).rejects.toMatchObject({ code: "23505" });
    const wh2 = newId("wh");
    await ctx.tdb.db.insert(webhooks).values({
      id: wh2,
      accountId: acc.id,
      url: "https://hooks.example.com/q",
      events: ["tracking.updated"],
      mode: "live",
    });
    const d = await delivery(e, at, "pending", wh2);
    expect((await ctx.tdb.sql`select count(*)::int as n from delivery_queue where delivery_id = ${d}`)[0]!.n).toBe(1);
    const dupQueue = ctx.tdb.sql`insert into delivery_queue (delivery_id, due_at) values (${d}, now())`;
    await expect(dupQueue).rejects.toMatchObject({ code: "23505" });
    await ctx.tdb.sql`delete from webhooks where id = ${wh2}`;
    expect(await exists("deliveries", d)).toBe(false);
    expect((await ctx.tdb.sql`select count(*)::int as n from delivery_queue where delivery_id = ${d}`)[0]!.n).toBe(0);
    expect((await ctx.tdb.sql`select count(*)::int as n from delivery_attempts where delivery_id = ${d}`)[0]!.n).toBe(
      0,
    );
  });
});
