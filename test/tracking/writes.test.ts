/**
 * Write only what changed: a lookup that finds the stored shipment unchanged
 * does not rewrite it. A terminal shipment is not written at all; a followed,
 * scheduled one gets only its fetch time and next re-check moved. A change
 * still goes through the full transaction with its event.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60", RECHECK_INTERVAL_SECONDS: "600" });
  growth = await ctx.account("growth");
});
afterAll(() => ctx.close());

const track = (n: string) => ctx.call(`/v1/track?courier=delhivery&tracking_number=${n}`, { key: growth.key });
/**
 * The row versions (`xmin` changes with every write) of the shipment and of its re-check schedule row, and the
 * columns a lookup may touch (`next_check_at`: the schedule row's own due time, else its chunk's; null when not
 * scheduled).
 */
const rowOf = async (n: string) => {
  const r = (
    await ctx.tdb.sql`
    select s.xmin::text || '/' || coalesce(q.xmin::text, '-') as v, s.checkpoint_count, greatest(s.last_checked_at, q.checked_at) as last_checked_at,
      coalesce(q.due_at, c.due_at) as next_check_at, s.updated_at
    from shipments s left join recheck_schedule q on q.shipment_id = s.id left join recheck_chunks c on c.id = q.chunk_id
    where s.tracking_number = ${n}`
  )[0]!;
  const ms = (x: unknown) => (x === null ? null : new Date(x as string).getTime());
  return {
    v: r.v as string,
    checkpoint_count: r.checkpoint_count as number,
    last_checked_at: ms(r.last_checked_at)!,
    next_check_at: ms(r.next_check_at)!,
    updated_at: ms(r.updated_at)!,
  };
};
const eventCount = async (n: string) =>
  Number(
    (
      await ctx.tdb
        .sql`select count(*)::int as n from events e join shipments s on s.id = e.shipment_id where s.tracking_number = ${n}`
    )[0]!.n,
  );

test("an unchanged delivered shipment: the second lookup answers the same and writes nothing", async () => {
  const n = "1234567000110";
  const [r1, b1] = await track(n);
  expect(r1.status).toBe(200);
  const before = await rowOf(n);
  ctx.clock.advance(5_000);
  const [r2, b2] = await track(n);
  expect(r2.status).toBe(200);
  expect(b2.data.Checkpoints).toEqual(b1.data.Checkpoints);
  expect(b2.data.ShipmentState).toBe("delivered");
  expect(await rowOf(n)).toEqual(before);
  expect(b2.usage.used).toBe(b1.usage.used + 1);
});

test("an unchanged followed shipment: only the fetch time and the next re-check move; a change is written with its event", async () => {
  const n = "1234567000121";
  expect((await track(n))[0].status).toBe(200);
  const first = await rowOf(n);
  ctx.clock.advance(5_000);
  expect((await track(n))[0].status).toBe(200);
  const second = await rowOf(n);
  expect(second.v).not.toBe(first.v);
  expect(second.checkpoint_count).toBe(first.checkpoint_count);
  expect(second.updated_at).toEqual(first.updated_at);
  expect(second.last_checked_at).toBe(first.last_checked_at + 5_000);
  // A lookup counts as a re-check: the next one is an interval (± 10 %) after it.
  expect(second.next_check_at).toBeGreaterThanOrEqual(second.last_checked_at + 540_000);
  expect(await eventCount(n)).toBe(0);
  // One simulator step later the courier shows a new checkpoint: the full path writes it and its event.
  ctx.clock.advance(60_000);
  expect((await track(n))[0].status).toBe(200);
  const third = await rowOf(n);
  expect(third.checkpoint_count).toBeGreaterThan(second.checkpoint_count);
  expect(third.updated_at).toBeGreaterThan(second.updated_at);
  expect(await eventCount(n)).toBe(1);
});
