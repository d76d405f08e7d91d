/**
 * A request's deadline bounds its database waits only (src/http/access-log.ts): time spent calling another service,
 * bounded by that call's own timeout, does not spend it. The app here has a 1.125 s request deadline
 * (DB_DEADLINE_SECONDS=1) on a healthy database, and calls that take longer than that: an asynchronous courier
 * twin (about 2 s of polling) and a webhook receiver that answers after 1.5 s. Both requests still answer 200 and
 * store what they did; with the calls on the clock, their last statements came too late and answered 503.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { servicesFor } from "../helpers/services.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let pool: ReturnType<typeof connect>;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  ctx = await testContext({ ...(await webhookEnv()), SANDBOX_ASYNC_SECONDS: "2", COURIER_ASYNC_BUDGET_MS: "10000" });
  rx = await startReceiver();
  pool = connect(ctx.tdb.url, { max: 4, deadlines: true, deadlineSeconds: 1 });
  app = buildApp({
    ...ctx.deps,
    config: { ...ctx.config, dbDeadlineSeconds: 1 },
    db: pool.db,
    services: servicesFor(pool.db, ctx.clock),
  });
});

afterAll(async () => {
  rx?.stop();
  await pool?.sql.end({ timeout: 1 });
  await ctx?.close();
});

async function call(path: string, key: string, method = "GET"): Promise<[Response, any]> {
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers: { "x-api-key": key } }));
  return [res, await res.json()];
}

test("a /v1/track whose courier call outlasts the request deadline answers 200 and is stored", async () => {
  const a = await ctx.account("growth");
  const [res, body] = await call("/v1/track?courier=shadowfax&tracking_number=SF1234567891", a.key);
  expect(res.status).toBe(200);
  // The courier call alone took longer than the whole request deadline (FetchTime: seconds, as text).
  expect(Number(body.data.FetchTime)).toBeGreaterThan(1.125);
  expect(body.usage.used).toBe(1);
  const rows = await ctx.tdb.sql`select 1 from shipments where tracking_number = 'SF1234567891'`;
  expect(rows.length).toBe(1);
});

test("a test fire whose receiver answers after the request deadline answers 200 and records its attempt", async () => {
  const a = await ctx.account("free");
  const path = `/slow-${a.id}`;
  rx.route(path, async () => {
    await Bun.sleep(1_500);
    return new Response("ok");
  });
  const [created, hook] = await ctx.call("/v1/webhooks", {
    key: a.key,
    method: "POST",
    body: JSON.stringify({ url: rx.url(path), events: ["tracking.delivered"], mode: "test" }),
  });
  expect(created.status).toBe(201);
  const [res, body] = await call(`/v1/webhooks/${hook.data.id}/test`, a.key, "POST");
  expect(res.status).toBe(200);
  expect(body.data).toMatchObject({ delivered: true, status_code: 200 });
  const [, log] = await ctx.call(`/v1/webhooks/${hook.data.id}/deliveries`, { key: a.key });
  expect(log.data.deliveries.map((d: { state: string }) => d.state)).toEqual(["delivered"]);
});
