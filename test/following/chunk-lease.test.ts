/**
 * A chunk's lease renewal racing a claim (docs/rechecks.md, "Re-checks in chunks"): a chunk the walk takes while a
 * renewal of its other chunks is in flight stays held, and its run ends as usual. Before the fix, the renewal
 * dropped every run it did not renew, so the run taken meanwhile was forgotten: its members' finishes were lost,
 * its lease ran out with the chunk still leased, and the next run re-checked its members again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ChunkWalk } from "../../src/modules/following/chunk-walk.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";

let tdb: TestDatabase;
const T0 = Date.UTC(2026, 10, 5, 12);
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

/** A chunk due at `dueMs` with `members` (shipment ids), none due on its own time; returns its id. */
async function chunkOf(dueMs: number, members: string[]): Promise<string> {
  const [c] = await tdb.sql`insert into recheck_chunks (courier, due_at) values ('delhivery', ${iso(dueMs)})
    returning id::text as id`;
  const id = String(c?.id);
  for (const m of members)
    await tdb.sql`insert into recheck_schedule (shipment_id, courier, tracking_number, chunk_id)
      values (${m}, 'delhivery', ${`tn-${m}`}, ${id})`;
  return id;
}

test("a chunk taken while a renewal of the walk's other chunks is in flight stays held, and its run ends", async () => {
  const a = await chunkOf(T0 - 2_000, ["a1", "a2"]);
  const b = await chunkOf(T0 - 1_000, ["b1", "b2"]);
  const walk = new ChunkWalk(tdb.db, "w", { intervalMs: 60_000, random: () => 0.5, now: () => T0 });
  // The walk holds chunk A (the older), two of its members handed out.
  expect((await walk.claim(T0, 2, 30_000, [])).map((m) => m.id)).toEqual(["a1", "a2"]);

  // Another transaction holds A's row, so the renewal (which asks for A only) waits on it.
  let unlock = () => {};
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const blocker = tdb.sql.begin(async (tx) => {
    await tx`select id from recheck_chunks where id = ${a} for update`;
    locked();
    await new Promise<void>((resolve) => (unlock = resolve));
  });
  await isLocked;
  const renewing = walk.renew(["a1", "a2"], T0 + 40_000);
  const waiting = async () =>
    (
      await tdb.sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%update recheck_chunks%'`
    )[0]?.n === 1;
  let members: Awaited<ReturnType<ChunkWalk["claim"]>>;
  try {
    expect(await eventually(waiting)).toBe(true);
    // Meanwhile a claim takes chunk B.
    members = await walk.claim(T0, 10, 30_000, []);
    expect(members.map((m) => m.id)).toEqual(["b1", "b2"]);
  } finally {
    unlock();
    await blocker;
  }
  // A kept its lease; B, taken after the renewal was sent, is not the renewal's to drop.
  expect(await renewing).toEqual(["a1", "a2"]);

  // B's run ends when its members are done: due one interval on, its lease given up.
  for (const m of members) await walk.finish(m, true);
  const [chunk] = await tdb.sql`select lease_owner, cursor, due_at, last_run_at from recheck_chunks where id = ${b}`;
  expect(chunk).toMatchObject({ lease_owner: null, cursor: null });
  expect(new Date(chunk?.due_at).getTime()).toBe(T0 + 60_000);
  expect(new Date(chunk?.last_run_at).getTime()).toBe(T0);
});
