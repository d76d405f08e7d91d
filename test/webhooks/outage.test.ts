/**
 * "A PostgreSQL restart: the worker backs off and resumes": the
 * delivery worker reaches the database through a loopback relay that the
 * test takes away (every connection drops, new ones are refused) and brings
 * back. The worker survives the outage and delivers what was enqueued during
 * it, without a restart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { createLogger } from "../../src/lib/log.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
});
afterAll(async () => {
  rx?.stop();
  await ctx?.close();
});

test("the worker rides out a database outage and delivers what was enqueued during it", async () => {
  const acc = await ctx.account("growth");
  const [res] = await ctx.call("/v1/webhooks", {
    method: "POST",
    key: acc.key,
    body: JSON.stringify({ url: rx.url("/outage"), events: ["tracking.in_transit"], mode: "live" }),
  });
  expect(res.status).toBe(201);
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  const states = () =>
    ctx.tdb
      .sql`select state from deliveries where webhook_id in (select id from webhooks where account_id = ${acc.id}) order by created_at`.then(
      (rows) => rows.map((r) => r.state as string),
    );
  const until = async (want: string[], ms: number) => {
    await eventually(async () => JSON.stringify(await states()) === JSON.stringify(want), ms);
    return states();
  };

  const relay = startPgRelay(ctx.tdb.url);
  const conn = connect(relay.url, { max: 4 });
  // The delivery job as the service runs it: the worker, and the scheduler's poll that resumes it after a back-off.
  const lines: string[] = [];
  const log = createLogger("debug", {}, (l) => void lines.push(l));
  const worker = createScheduler({ ...ctx.deps, db: conn.db, log }, { jobs: ["delivery"] });
  await worker.start();
  try {
    expect(await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(ctx.clock.now()))).toBe(1);
    await rx.waitFor("/outage", 1, 15_000);
    expect(await until(["delivered"], 10_000)).toEqual(["delivered"]);

    relay.stop(); // the outage: the worker's pool and its LISTEN connection drop
    expect(await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(ctx.clock.now()))).toBe(1); // written directly, during the outage
    // Two of the worker's claims fail meanwhile: the row was due at both, and neither sent it.
    const failed = () => lines.filter((l) => l.includes('"msg":"delivery claim failed; backing off"')).length;
    const before = failed();
    expect(await eventually(() => failed() >= before + 2, 15_000)).toBe(true);
    expect(rx.on("/outage")).toHaveLength(1);

    relay.start();
    const got = await rx.waitFor("/outage", 2, 45_000);
    expect(got[1]!.json.event).toBe("tracking.in_transit");
    expect(await until(["delivered", "delivered"], 10_000)).toEqual(["delivered", "delivered"]);
  } finally {
    await worker.stop({ timeout: 2_000 });
    relay.stop();
    await conn.sql.end({ timeout: 1 });
  }
}, 90_000);
