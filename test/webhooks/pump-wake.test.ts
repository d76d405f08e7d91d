/**
 * The claimer's wake-ups (src/jobs/runner.ts): a NOTIFY that arrives while a claim is in
 * flight is not lost when that claim comes back short. Real PostgreSQL; the claim's answer is held
 * back until the new row is committed and the wake-up has arrived (the statement itself has run, so
 * its snapshot does not hold the row), which is the window bench/deliver.ts once hung in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { silentLogger } from "../../src/lib/log.ts";
import { createRunner } from "../../src/jobs/runner.ts";
import { claimDue, type ClaimedDelivery } from "../../src/modules/webhooks/delivery/outbox.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { webhookEnv } from "./receiver.ts";
import { proxyStatements } from "../helpers/sql-proxy.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  await ctx.close();
});

/**
 * `sql` whose tagged-template queries run at once but answer only once `gate` is open. `close()` resolves when a
 * statement has run and its answer is being held (its snapshot is taken).
 */
function gated(sql: postgres.Sql) {
  let open: Promise<void> = Promise.resolve();
  let release = () => {};
  let ran = () => {};
  const proxy = proxyStatements(sql, (send) => {
    const answer = send() as Promise<unknown>;
    const gate = open;
    const held = ran;
    return answer.then(async (r) => {
      held();
      await gate;
      return r;
    });
  });
  return {
    sql: proxy,
    close(): Promise<void> {
      open = new Promise<void>((r) => (release = r));
      return new Promise<void>((r) => (ran = r));
    },
    open: () => release(),
  };
}

test("a wake-up during a claim that comes back empty claims again, so a row committed meanwhile is sent", async () => {
  const acc = await ctx.account("business");
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: "https://127.0.0.1:9/w", events: ["tracking.updated"], mode: "live" }),
  });
  expect(res.status).toBe(201);
  const shp = await shipment(ctx.tdb.db, [acc.id]);

  const g = gated(ctx.tdb.sql);
  const started: ClaimedDelivery[] = [];
  const pump = createRunner<ClaimedDelivery>({
    name: "delivery",
    claim: (limit, nowMs) => claimDue(g.sql, nowMs, limit, 60_000),
    clock: ctx.clock,
    log: silentLogger,
    concurrency: 4,
    prefetch: 0,
    refillAt: 1,
    maxWaitMs: 30_000,
    release: async () => {},
    task: async (row) => void started.push(row),
  });
  pump.setRunning(true);
  await pump.wake(); // nothing due: the pump is drained
  expect(started).toHaveLength(0);

  const claimed = g.close();
  const pass = pump.wake(); // the claim runs and finds nothing; its answer is held back
  await claimed;
  await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now())); // committed after the claim's snapshot
  void pump.wake(); // the NOTIFY of that commit, while the claim is still in flight
  g.open();
  await pass;
  // No further wake-up: the poll would come within a second in the service, never here.
  pump.setRunning(false);
  expect(started.map((r) => r.webhook_id)).toEqual([body.data.id]);
});
