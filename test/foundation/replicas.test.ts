/**
 * Authentication and the per-minute limit without a database round trip per
 * request stay correct across replicas: each "replica" here is a real app on
 * its own connection pool to one database (spec: Authentication; spec-map Decisions: Per-minute rate limit).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { FLUSH_INTERVAL_MS } from "../../src/modules/accounts/rate-counter.ts";
import { rateCounterFor } from "../helpers/services.ts";
import { revokeApiKey, setPlan, setStatus } from "../../src/modules/accounts/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";
import { servicesFor } from "../helpers/services.ts";

let ctx: TestContext;
let other: ReturnType<typeof connect>;
let app2: ReturnType<typeof buildApp>;
beforeAll(async () => {
  ctx = await testContext();
  other = connect(ctx.tdb.url, { max: 4 });
  app2 = buildApp({ ...ctx.deps, db: other.db, services: servicesFor(other.db, ctx.clock) });
});
afterAll(async () => {
  await other.sql.end();
  await ctx.close();
});

const get = (app: ReturnType<typeof buildApp>, key: string) =>
  app.handle(new Request("http://localhost/v1/couriers", { headers: { "x-api-key": key } }));

describe("key → account cache across replicas", () => {
  test("a key revoked through one replica is refused by the other (LISTEN/NOTIFY), which had it cached", async () => {
    const a = await ctx.account("free");
    // Both replicas have served (and cached) the key.
    await eventually(async () => (await get(app2, a.key)).status === 200);
    expect((await get(app2, a.key)).status).toBe(200);
    expect((await get(ctx.app, a.key)).status).toBe(200);
    const keyId = (await ctx.tdb.sql`select id from api_keys where account_id = ${a.id}`)[0]!.id as string;
    expect(await revokeApiKey(ctx.tdb.db, a.id, keyId)).toBe(true);
    // The replica that revoked refuses at once; the other as soon as the notification arrives.
    expect((await get(ctx.app, a.key)).status).toBe(401);
    expect(await eventually(async () => (await get(app2, a.key)).status === 401)).toBe(true);
  });

  test("a plan change and a status change reach the other replica's cached account", async () => {
    const a = await ctx.account("free");
    ctx.clock.set(Date.UTC(2026, 10, 6, 9, 0, 0));
    expect((await get(app2, a.key)).headers.get("ratelimit-limit")).toBe("10");
    await setPlan(ctx.tdb.db, a.id, "pro");
    expect(await eventually(async () => (await get(app2, a.key)).headers.get("ratelimit-limit") === "300")).toBe(true);
    await setStatus(ctx.tdb.db, a.id, "needs_attention");
    const track = () =>
      app2.handle(
        new Request("http://localhost/v1/track?courier=delhivery&tracking_number=12345678900010", {
          headers: { "x-api-key": a.key },
        }),
      );
    expect(await eventually(async () => (await track()).status === 402)).toBe(true);
    const body = (await (await track()).json()) as { error: { code: string } };
    expect(body.error.code).toBe("ACCOUNT_NEEDS_ATTENTION");
  });
});

describe("per-minute windows across replicas", () => {
  test("each replica counts in process and learns the other's count at its next flush: the window is shared", async () => {
    const a = await ctx.account("free");
    ctx.clock.set(Date.UTC(2026, 10, 6, 10, 0, 5));
    for (let i = 0; i < 6; i++) expect((await get(ctx.app, a.key)).status).toBe(200);
    // The first flush comes from the counter's own timer, within one interval; later ones are forced, so the
    // test does not wait for the timer each time.
    const rowCount = async () =>
      (await ctx.tdb.sql`select count from rate_windows where key = ${"rl:" + a.id}`).map((r) => r.count);
    expect(await eventually(async () => (await rowCount())[0] === 6, 3 * FLUSH_INTERVAL_MS)).toBe(true);
    const flushBoth = () => Promise.all([rateCounterFor(ctx.tdb.db).flush(), rateCounterFor(other.db).flush()]);
    // The second replica's first request of the window cannot know the first's six yet (the documented
    // lag of one flush); its flush brings them back, and from then on it decides on the shared count.
    expect((await get(app2, a.key)).headers.get("ratelimit-remaining")).toBe("9");
    await flushBoth();
    expect((await get(app2, a.key)).headers.get("ratelimit-remaining")).toBe("2");
    await flushBoth();
    const rows = await ctx.tdb.sql`select count from rate_windows where key = ${"rl:" + a.id}`;
    expect(rows.map((r) => r.count)).toEqual([8]);
    // Two more reach the limit of 10. A replica decides on the others' counts as of its own last flush,
    // so each may admit what it gets before its next one (the documented bound); after that, both refuse.
    for (let i = 0; i < 2; i++) expect((await get(i % 2 ? ctx.app : app2, a.key)).status).toBe(200);
    await flushBoth();
    await get(ctx.app, a.key);
    await get(app2, a.key);
    await flushBoth();
    expect((await get(ctx.app, a.key)).status).toBe(429);
    expect((await get(app2, a.key)).status).toBe(429);
  });
});
