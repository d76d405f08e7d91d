/**
 * "PostgreSQL restart during a batch: the job logs, backs off and
 * resumes": the scheduler reaches the database through a loopback relay that
 * the test takes away and brings back. Re-checks fail while it is gone (the
 * job backs off instead of crashing) and resume without a restart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { createLogger } from "../../src/lib/log.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";
import { seedFollowed } from "./helpers.ts";
import { servicesFor } from "../helpers/services.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ RECHECK_INTERVAL_SECONDS: "60" });
});
afterAll(() => ctx?.close());

test("re-checks stop during a database outage and resume after it, without a restart", async () => {
  const acc = await ctx.account("growth");
  const lines: string[] = [];
  const log = createLogger("debug", {}, (l) => void lines.push(l));
  const relay = startPgRelay(ctx.tdb.url);
  const conn = connect(relay.url, { max: 4 });
  const scheduler = createScheduler(
    { ...ctx.deps, db: conn.db, log, services: servicesFor(conn.db, ctx.clock) },
    { jobs: ["recheck"], recheckPattern: "* * * * * *" },
  );
  const awb = "1234567890331";
  try {
    relay.stop(); // the database is gone before the first batch
    await seedFollowed(ctx, acc.id, "delhivery", awb); // due now (written directly, not through the relay)
    await scheduler.start();
    const failed = Date.now() + 10_000;
    while (Date.now() < failed && !lines.some((l) => l.includes("backing off"))) await Bun.sleep(100);
    expect(lines.some((l) => l.includes('"job":"recheck"') && l.includes("backing off"))).toBe(true);
    expect(ctx.sim.calls("delhivery", awb)).toBe(0);

    relay.start();
    const resumed = Date.now() + 30_000;
    while (Date.now() < resumed && ctx.sim.calls("delhivery", awb) === 0) await Bun.sleep(100);
    expect(ctx.sim.calls("delhivery", awb)).toBe(1);
    const read = async () =>
      (
        await ctx.tdb
          .sql`select coalesce(q.due_at, c.due_at) as due_at, coalesce(q.lease_owner, c.lease_owner) as lease_owner
            from shipments s join recheck_schedule q on q.shipment_id = s.id left join recheck_chunks c on c.id = q.chunk_id
            where s.tracking_number = ${awb}`
      )[0]!;
    const deadline = Date.now() + 10_000;
    let r = await read();
    while (Date.now() < deadline && r.lease_owner !== null) {
      await Bun.sleep(100);
      r = await read();
    }
    expect(r.lease_owner).toBeNull();
    expect(new Date(r.due_at).getTime()).toBeGreaterThan(ctx.clock.now());
  } finally {
    await scheduler.stop({ timeout: 2_000 });
    relay.stop();
    await conn.sql.end({ timeout: 1 });
  }
}, 60_000);
