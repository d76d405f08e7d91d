/**
 * The history appended, not rewritten (docs/performance.md, "History"): the newest checkpoints in the shipment row,
 * older ones in sealed chunks written once; a revision rewrites them; a database not yet contracted keeps the
 * 1.0.0 column current; every read answers exactly what the 1.0.0 layout answered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../src/domain/checkpoint.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import {
  CHUNK,
  decodeCheckpoint,
  decodeHistory,
  encodeCheckpoint,
  planHistory,
} from "../../src/modules/following/history.ts";
import { recordFetch } from "../../src/modules/following/store.ts";
import { outboxEventSink } from "../../src/modules/webhooks/delivery/outbox.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let account: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext();
  account = await ctx.account("growth");
});
afterAll(() => ctx.close());

const delhivery = courierBySlug("delhivery")!;
const BASE = Date.parse("2026-10-01T00:00:00Z");

/** Checkpoint k of a history: one per hour, oldest first. */
function cp(k: number, over: Partial<RawCheckpoint> = {}): RawCheckpoint {
  const at = new Date(BASE + k * 3_600_000).toISOString();
  return {
    state: k === 0 ? "pending" : "in_transit",
    subStatus: null,
    activity: `Scan ${k}`,
    location: `Hub ${k % 7}`,
    localDate: at.slice(0, 10),
    localTime: at.slice(11, 16),
    at,
    rawCode: `X-${k % 5}`,
    rawStatus: "In Transit",
    remark: k % 4 === 3 ? `Bag ${k}` : null,
    ...over,
  };
}
const range = (n: number) => Array.from({ length: n }, (_, k) => cp(k));
const snap = (checkpoints: RawCheckpoint[]): TrackingSnapshot => ({
  checkpoints,
  originCity: "Mumbai",
  destinationCity: "Delhi",
  podUrl: null,
  remark: null,
});

async function record(n: string, checkpoints: RawCheckpoint[], db = ctx.tdb.db) {
  ctx.clock.advance(60_000);
  return recordFetch(db, delhivery, n, snap(checkpoints), {
    followAccountId: account.id,
    nowMs: ctx.clock.now(),
    recheckIntervalSeconds: 28_800,
    random: () => 0.5,
    onEvents: outboxEventSink,
  });
}

/**
 * The layout of the stored row: chunk rows with their xmin, the tail's length, the 1.0.0 column. Every call also
 * checks that the history read encoded and decoded in the process (the delivery claim's read) is `shipment_history`.
 */
async function layout(n: string) {
  const [s] = await ctx.tdb.sql<
    {
      id: string;
      chunks: string[];
      tail: number;
      legacy: unknown[];
      checkpoint_count: number;
      history: unknown[];
      stored: unknown[];
    }[]
  >`
    select id, history_chunks::text[] as chunks, jsonb_array_length(history_tail) as tail, checkpoints as legacy,
      checkpoint_count, shipment_history(s) as history, shipment_history_stored(s) as stored
    from shipments s where courier = 'delhivery' and tracking_number = ${n}`;
  expect(decodeHistory(s!.stored)).toStrictEqual(s!.history as never);
  const chunks = await ctx.tdb.sql`
    select id::text, xmin::text, jsonb_array_length(checkpoints) as size from shipment_checkpoint_chunks
    where shipment_id = ${s!.id} order by id`;
  return { ...s!, chunkRows: chunks.map((c) => ({ ...c })) };
}

/** What the API answers for the shipment: the stored record and the events API's payload. */
async function reads(n: string) {
  const [, stored] = await ctx.call(`/v1/shipments/delhivery/${n}`, { key: account.key });
  const [, events] = await ctx.call(`/v1/events?tracking_number=${n}`, { key: account.key });
  const [, list] = await ctx.call(`/v1/shipments?tracking_number=${n}`, { key: account.key });
  // ExecutionTime is the request's own duration, not stored data.
  return JSON.stringify({ stored, events, list }, (k, v) => (k === "ExecutionTime" ? undefined : v));
}

const canonical = (x: unknown) =>
  JSON.stringify(x, (_k, v) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );
const newestFirst = (cps: RawCheckpoint[]) => [...cps].sort((a, b) => (a.at < b.at ? 1 : -1));

describe("history layout", () => {
  test("a change that adds checkpoints appends them: the sealed chunks are not written again", async () => {
    const n = "7000000000011";
    await record(n, range(2 * CHUNK + 6));
    const before = await layout(n);
    expect(before.chunkRows.map((c) => c.size)).toEqual([CHUNK, CHUNK]);
    expect(before.tail).toBe(6);
    expect(before.history).toEqual(newestFirst(range(2 * CHUNK + 6)));
    expect(before.legacy).toEqual([]);
    expect(before.checkpoint_count).toBe(2 * CHUNK + 6);

    const changed = await record(n, range(2 * CHUNK + 8));
    expect(changed.event).toBe("tracking.updated");
    const after = await layout(n);
    // The same chunk rows, not even locked or rewritten (xmin unchanged); only the tail took the two new ones.
    expect(after.chunkRows).toEqual(before.chunkRows);
    expect(after.tail).toBe(before.tail + 2);
    expect(after.history).toEqual(newestFirst(range(2 * CHUNK + 8)));
    expect(changed.shipment.checkpoints).toEqual(newestFirst(range(2 * CHUNK + 8)));

    // Once the tail passes a chunk's worth, its oldest CHUNK are sealed into a new chunk; the old ones stay as they were.
    await record(n, range(2 * CHUNK + CHUNK + 3));
    const sealed = await layout(n);
    expect(sealed.chunkRows.slice(0, 2)).toEqual(before.chunkRows);
    expect(sealed.chunkRows.map((c) => c.size)).toEqual([CHUNK, CHUNK, CHUNK]);
    expect(sealed.tail).toBe(3);
    expect(sealed.history).toEqual(newestFirst(range(3 * CHUNK + 3)));
  });

  test("a courier revising a sealed checkpoint rewrites the history: old chunks removed, the list exactly the merged one", async () => {
    const n = "7000000000022";
    await record(n, range(CHUNK + 8));
    const before = await layout(n);
    // Checkpoint 2 comes back with another status text (same instant, code, activity and place: the same checkpoint).
    const revised = range(CHUNK + 9).map((c, k) => (k === 2 ? { ...c, rawStatus: "Reached origin hub" } : c));
    const res = await record(n, revised);
    const after = await layout(n);
    expect(after.history).toEqual(newestFirst(revised));
    expect(res.shipment.checkpoints).toEqual(newestFirst(revised));
    expect(after.chunkRows.map((c) => c.id)).not.toContain(before.chunkRows[0]!.id);
    const [left] = await ctx.tdb
      .sql`select count(*)::int as n from shipment_checkpoint_chunks where id = ${before.chunkRows[0]!.id}`;
    expect(left!.n).toBe(0);
  });

  test("reads answer identical JSON from the 1.0.0 layout and from the new one, odd stored checkpoints included", async () => {
    const n = "7000000000033";
    await record(n, range(45));
    // Checkpoints as an older release may have stored them: one without `remark`, one with a field more.
    const odd = newestFirst(range(45)).map((c) => ({ ...c }) as Record<string, unknown>);
    delete odd[40]!.remark;
    odd[43]!.extra = "kept";
    await ctx.tdb.sql`
      update shipments set checkpoints = ${JSON.stringify(odd)}::text::jsonb, history_at = null
      where courier = 'delhivery' and tracking_number = ${n}`;
    // The courier now lists only its newest scans, one of them new: the stored ones are kept as they are.
    await record(n, [cp(44), cp(45)]);
    const moved = await layout(n);
    expect(moved.legacy).toEqual([]);
    expect(moved.chunkRows).toHaveLength(1);
    // Exactly the same fields (a missing one stays missing); jsonb orders keys its own way, as it did before.
    expect(canonical(moved.history)).toBe(canonical([cp(45), ...odd]));
    const fromNew = await reads(n);
    // The same row as release 1.0.0 stores it: the whole list in `checkpoints`, no tail, no chunks.
    await ctx.tdb.sql`
      update shipments s set checkpoints = shipment_history(s), history_tail = null, history_chunks = null, history_at = null
      where courier = 'delhivery' and tracking_number = ${n}`;
    expect((await layout(n)).stored).toStrictEqual(moved.history);
    expect(await reads(n)).toBe(fromNew);
  });

  test("a database not yet contracted (layout level 1) keeps shipments.checkpoints current; once contracted it is left []", async () => {
    const pool = connect(ctx.tdb.url, { max: 2 });
    try {
      await ctx.tdb.sql`insert into service_settings (name, value) values ('compat_level', '1')
        on conflict (name) do update set value = excluded.value`;
      const n = "7000000000044";
      await record(n, range(38), pool.db);
      await record(n, range(39), pool.db);
      const legacy = await layout(n);
      expect(legacy.legacy).toEqual(newestFirst(range(39)));
      expect(legacy.checkpoint_count).toBe(39);
      expect(legacy.history).toEqual(newestFirst(range(39)));
      // A 1.0.0 process writes the old column only: its write is what every read then answers.
      await ctx.tdb.sql`
        update shipments set checkpoints = ${JSON.stringify(newestFirst(range(40)))}::text::jsonb, checkpoint_count = 40,
          updated_at = updated_at + interval '1 second' where courier = 'delhivery' and tracking_number = ${n}`;
      expect((await layout(n)).history).toEqual(newestFirst(range(40)));
      await record(n, range(41), pool.db);
      expect((await layout(n)).history).toEqual(newestFirst(range(41)));
      expect((await layout(n)).legacy).toEqual(newestFirst(range(41)));
    } finally {
      await ctx.tdb.sql`update service_settings set value = '2' where name = 'compat_level'`;
      await pool.sql.end({ timeout: 5 });
    }
    // A fresh pool reads the raised level: the old column is no longer written.
    const contracted = connect(ctx.tdb.url, { max: 2 });
    try {
      await record("7000000000044", range(42), contracted.db);
      const after = await layout("7000000000044");
      expect(after.legacy).toEqual([]);
      expect(after.history).toEqual(newestFirst(range(42)));
    } finally {
      await contracted.sql.end({ timeout: 5 });
    }
  });

  test("two first lookups of one AWB at once: one row, both answered (the lock creates the row once)", async () => {
    const n = "7000000000055";
    const [a, b] = await Promise.all([record(n, range(3)), record(n, range(3))]);
    expect(a.shipment.id).toBe(b.shipment.id);
    expect((await layout(n)).history).toEqual(newestFirst(range(3)));
  });

  test("the compact encoding reads back exactly: wall times east and west of UTC, across midnight, milliseconds; others kept as they are", async () => {
    const at = (iso: string, localDate: string, localTime: string) => ({ ...cp(1), at: iso, localDate, localTime });
    const cases = [
      at("2026-10-01T18:45:59.999Z", "2026-10-02", "00:15"), // India, +05:30, past local midnight
      at("2026-03-01T02:00:00.000Z", "2026-02-28", "21:00"), // −05:00, back a day
      at("2028-02-29T23:59:00.001Z", "2028-03-01", "05:44"), // +05:45, leap day
      at("2026-10-01T06:00:00Z", "2026-10-01", "11:30"), // no milliseconds: not the canonical form, kept as text
      at("2026-10-01T06:00:00.000Z", "01-10-2026", "11:30"), // a date in another form: kept as text
      at("2026-10-01T06:00:00.000Z", "2026-10-01", "11:31"), // a wall time that is no offset of the instant
    ];
    expect(cases.map((c) => (encodeCheckpoint(c) as unknown[]).length)).toEqual([9, 9, 9, 10, 10, 9]);
    for (const c of cases) {
      const [row] = await ctx.tdb
        .sql`select shipment_checkpoint(${JSON.stringify(encodeCheckpoint(c))}::text::jsonb) as c`;
      expect(row!.c).toEqual(c);
      expect(decodeCheckpoint(encodeCheckpoint(c))).toStrictEqual(c);
    }
  });

  test("planHistory: appends keep every chunk; a removed newest checkpoint or a changed sealed one rewrites", () => {
    const stored = newestFirst(range(40));
    const before = { checkpoints: stored, current: true, tailLength: 8, chunks: [7] };
    expect(planHistory(before, newestFirst(range(41)))).toMatchObject({ keep: [7], drop: [], seal: [] });
    expect(planHistory(before, newestFirst(range(41))).tail).toHaveLength(9);
    expect(planHistory(before, newestFirst(range(32)))).toMatchObject({ keep: [], drop: [7] });
    expect(planHistory({ ...before, current: false }, stored)).toMatchObject({ keep: [], drop: [7] });
  });
});
