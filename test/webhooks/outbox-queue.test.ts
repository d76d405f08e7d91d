/**
 * The outbox's due queue and the HOT rule (docs/webhooks.md, "The worker"):
 * a pending delivery has one `delivery_queue` row due at its next attempt, a
 * retry moves it, a final outcome removes it; and no index on `deliveries`
 * covers a column that a claim or an outcome writes, nor one on the re-check
 * schedule `recheck_queue` (and `recheck_schedule`) the lease columns its claim writes, so those
 * updates stay HOT (PostgreSQL writes no index entry for them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "60,300,1800,7200,86400" }));
  rx = await startReceiver();
  worker = createDeliveryWorker(ctx.deps);
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

/** Columns each index of `table` uses, in its key, INCLUDE list, expressions or predicate. */
async function indexedColumns(table: string): Promise<Map<string, string[]>> {
  const rows = await ctx.tdb.sql`
    select i.relname as index, array(
      select a.attname from pg_attribute a
      where a.attrelid = x.indrelid and a.attnum > 0 and (
        a.attnum = any(x.indkey::int2[])
        or pg_get_expr(x.indexprs, x.indrelid) ~ ('\\m' || a.attname || '\\M')
        or pg_get_expr(x.indpred, x.indrelid) ~ ('\\m' || a.attname || '\\M'))
    )::text[] as cols
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    where t.relname = ${table}`;
  return new Map(rows.map((r) => [r.index as string, r.cols as string[]]));
}

describe("HOT updates", () => {
  test("no index on deliveries covers a column the claim or an outcome writes", async () => {
    const written = [
      "lease_until",
      "state",
      "attempts",
      "next_attempt_at",
      "last_status_code",
      "last_error",
      "updated_at",
    ];
    const idx = await indexedColumns("deliveries");
    expect(idx.size).toBeGreaterThanOrEqual(4);
    for (const [name, cols] of idx) expect(`${name}: ${cols.filter((c) => written.includes(c))}`).toBe(`${name}: `);
  });

  test("no index on the re-check schedule covers the lease; shipments' old schedule columns stay unwritten", async () => {
    const idx = await indexedColumns("recheck_queue");
    expect([...idx.keys()].sort()).toEqual([
      "recheck_queue_due_bucket_idx",
      "recheck_queue_due_bucket_offset_idx",
      "recheck_queue_due_idx",
      "recheck_queue_pkey",
    ]);
    for (const [name, cols] of idx)
      expect(`${name}: ${cols.filter((c) => c === "lease_until" || c === "lease_owner")}`).toBe(`${name}: `);
    // The schedule from layout level 2 (docs/rechecks.md, "Re-checks in chunks"): membership by chunk and the
    // rows due on their own time; no index on the lease or the check time, of the rows or of the chunks.
    const schedule = await indexedColumns("recheck_schedule");
    expect([...schedule.keys()].sort()).toEqual([
      "recheck_schedule_chunk_idx",
      "recheck_schedule_due_idx",
      "recheck_schedule_pkey",
    ]);
    const chunks = await indexedColumns("recheck_chunks");
    expect([...chunks.keys()].sort()).toEqual([
      "recheck_chunks_courier_due_idx",
      "recheck_chunks_due_idx",
      "recheck_chunks_pkey",
    ]);
    for (const [name, cols] of chunks)
      expect(`${name}: ${cols.filter((c) => ["lease_until", "lease_owner", "cursor"].includes(c))}`).toBe(`${name}: `);
    for (const [name, cols] of schedule)
      expect(`${name}: ${cols.filter((c) => ["lease_until", "lease_owner", "checked_at"].includes(c))}`).toBe(
        `${name}: `,
      );
    // A followed lookup schedules the shipment in the schedule only (the old columns are for the previous version).
    const acc = await ctx.account("business");
    const [res] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890231", { key: acc.key });
    expect(res.status).toBe(200);
    const [row] = await ctx.tdb.sql`
      select s.next_check_at, s.lease_until, s.lease_owner, s.recheck_failures, q.chunk_id is not null as queued
      from shipments s left join recheck_schedule q on q.shipment_id = s.id
      where s.courier = 'delhivery' and s.tracking_number = '1234567890231'`;
    expect({ ...row }).toEqual({
      next_check_at: null,
      lease_until: null,
      lease_owner: null,
      recheck_failures: 0,
      queued: true,
    });
  });

  test("the tables the claims stamp leave room on each page for the new row versions", async () => {
    const rows = await ctx.tdb
      .sql`select relname, reloptions from pg_class where relname in ('recheck_chunks', 'recheck_queue', 'recheck_schedule', 'shipments') order by relname`;
    // `deliveries` is partitioned (migration 0022): every partition, DEFAULT included, carries the fillfactor.
    const parts = await ctx.tdb
      .sql`select c.relname, c.reloptions from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'deliveries'::regclass`;
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const p of parts) expect([p.relname, p.reloptions]).toEqual([p.relname, ["fillfactor=50"]]);
    expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([
      [
        "recheck_chunks",
        [
          "fillfactor=50",
          "autovacuum_vacuum_scale_factor=0.05",
          "autovacuum_vacuum_threshold=200",
          "autovacuum_analyze_scale_factor=0.05",
        ],
      ],
      [
        "recheck_queue",
        [
          "fillfactor=70",
          "autovacuum_vacuum_scale_factor=0.01",
          "autovacuum_vacuum_threshold=1000",
          "autovacuum_analyze_scale_factor=0.02",
        ],
      ],
      [
        "recheck_schedule",
        [
          "fillfactor=90",
          "autovacuum_vacuum_scale_factor=0.01",
          "autovacuum_vacuum_threshold=1000",
          "autovacuum_vacuum_insert_scale_factor=0.01",
          "autovacuum_analyze_scale_factor=0.02",
        ],
      ],
      ["shipments", ["fillfactor=80"]],
    ]);
  });
});

describe("delivery_queue", () => {
  test("a pending delivery is queued at its due time; a retry moves it; a final outcome removes it", async () => {
    const acc = await ctx.account("business");
    const path = `/q-${acc.id}`;
    let answer = 503;
    rx.route(path, () => new Response("x", { status: answer }));
    const [res] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({ url: rx.url(path), events: ["tracking.updated"], mode: "live" }),
    });
    expect(res.status).toBe(201);
    const shp = await shipment(ctx.tdb.db, [acc.id]);
    const t0 = ctx.clock.now();
    expect(await emit(ctx.tdb.db, shp, "tracking.updated", new Date(t0))).toBe(1);
    const queue = () =>
      ctx.tdb
        .sql`select q.due_at, d.state, d.next_attempt_at from deliveries d left join delivery_queue q on q.delivery_id = d.id where d.shipment_id = ${shp}`;

    const [queued] = await queue();
    expect(new Date(queued!.due_at).getTime()).toBe(t0);
    expect(new Date(queued!.next_attempt_at).getTime()).toBe(t0);

    expect(await worker.runOnce()).toBe(1); // 503: retry 1 a minute later (spec: Delivery rules 2)
    const [retry] = await queue();
    expect(retry!.state).toBe("pending");
    expect(new Date(retry!.due_at).getTime()).toBe(t0 + 60_000);
    expect(new Date(retry!.next_attempt_at).getTime()).toBe(t0 + 60_000);
    expect(await worker.runOnce()).toBe(0); // not due yet

    answer = 200;
    ctx.clock.advance(60_000);
    expect(await worker.runOnce()).toBe(1);
    const [done] = await queue();
    expect(done).toMatchObject({ state: "delivered", due_at: null, next_attempt_at: null });
    expect(rx.on(path).map((r) => r.headers["x-webhook-delivery"]!.split("-").at(-1))).toEqual(["1", "2"]);
  });
});
