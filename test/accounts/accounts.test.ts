import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { quotaLeasesFor } from "../helpers/services.ts";
import { createApiKey, revokeApiKey, setPlan, setUsage } from "../../src/modules/accounts/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

describe("API keys", () => {
  test("a revoked key is refused at once; another key of the account still works", async () => {
    const a = await ctx.account("free");
    const second = await createApiKey(ctx.tdb.db, a.id, "second");
    const [ok] = await ctx.call("/v1/couriers", { key: a.key });
    expect(ok.status).toBe(200);
    const keys = await ctx.tdb.db.query.apiKeys.findMany({ where: (k, { eq }) => eq(k.accountId, a.id) });
    const first = keys.find((k) => k.name === "default")!;
    expect(await revokeApiKey(ctx.tdb.db, a.id, first.id)).toBe(true);
    const [res, body] = await ctx.call("/v1/couriers", { key: a.key });
    expect(res.status).toBe(401);
    expect(body.error.code).toBe("INVALID_API_KEY");
    const [res2] = await ctx.call("/v1/couriers", { key: second.key });
    expect(res2.status).toBe(200);
  });

  test("only the hash is stored", async () => {
    const a = await ctx.account("free");
    const rows = await ctx.tdb.sql`select key_hash, prefix from api_keys where account_id = ${a.id}`;
    expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.key_hash).not.toContain(a.key.slice(4));
    expect(a.key.startsWith(rows[0]!.prefix)).toBe(true);
  });
});

describe("per-minute rate limit", () => {
  test("free: 10 per minute, the 11th is 429 with Retry-After and RateLimit-* headers; the next window admits again", async () => {
    const a = await ctx.account("free");
    ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 30));
    for (let i = 1; i <= 10; i++) {
      const [res] = await ctx.call("/v1/couriers", { key: a.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-remaining")).toBe(String(10 - i));
      expect(res.headers.get("ratelimit-reset")).toBe("30");
    }
    const [res, body] = await ctx.call("/v1/couriers", { key: a.key });
    expect(res.status).toBe(429);
    expect(body.error.code).toBe("RATE_LIMITED");
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.headers.get("ratelimit-limit")).toBe("10");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    ctx.clock.advance(30_000);
    const [next] = await ctx.call("/v1/couriers", { key: a.key });
    expect(next.status).toBe(200);
  });

  test("the limit is per account, across all its keys", async () => {
    const a = await ctx.account("free");
    const b = await createApiKey(ctx.tdb.db, a.id, "b");
    ctx.clock.set(Date.UTC(2026, 10, 5, 11, 0, 0));
    for (let i = 0; i < 5; i++) await ctx.call("/v1/couriers", { key: a.key });
    for (let i = 0; i < 5; i++) await ctx.call("/v1/couriers", { key: b.key });
    const [res] = await ctx.call("/v1/couriers", { key: b.key });
    expect(res.status).toBe(429);
  });

  test("an upgrade raises the limit at once for the same key", async () => {
    const a = await ctx.account("free");
    ctx.clock.set(Date.UTC(2026, 10, 5, 12, 0, 0));
    for (let i = 0; i < 10; i++) await ctx.call("/v1/couriers", { key: a.key });
    expect((await ctx.call("/v1/couriers", { key: a.key }))[0].status).toBe(429);
    await setPlan(ctx.tdb.db, a.id, "starter");
    const [res] = await ctx.call("/v1/couriers", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-limit")).toBe("60");
  });
});

describe("quota reservation", () => {
  test("50 parallel reservations with 5 units left → exactly 5, also split across two app instances on one database", async () => {
    const a = await ctx.account("free");
    const now = ctx.clock.now();
    await setUsage(ctx.tdb.db, a.id, 95, now);
    // A second, independent pool stands in for a second replica.
    const other = connect(ctx.tdb.url, { max: 10 });
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => quotaLeasesFor(i % 2 ? ctx.tdb.db : other.db).reserve(a.id, 100, now)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(5);
      expect(await usedThisMonth(ctx.tdb.db, a.id, now)).toBe(100);
    } finally {
      await other.sql.end();
    }
  });

  test("the month is the UTC calendar month: the count starts again at 00:00 UTC on the 1st", async () => {
    const a = await ctx.account("free");
    const endOfMonth = Date.UTC(2026, 10, 30, 23, 59, 59);
    await setUsage(ctx.tdb.db, a.id, 100, endOfMonth);
    expect((await quotaLeasesFor(ctx.tdb.db).reserve(a.id, 100, endOfMonth)).ok).toBe(false);
    expect((await quotaLeasesFor(ctx.tdb.db).reserve(a.id, 100, endOfMonth + 1000)).ok).toBe(true);
  });

  test("two real app instances serving one account: quota stays exact", async () => {
    const a = await ctx.account("pro");
    await setUsage(ctx.tdb.db, a.id, 49_995, ctx.clock.now());
    const other = connect(ctx.tdb.url, { max: 10 });
    const app2 = buildApp({ ...ctx.deps, db: other.db });
    try {
      const calls = Array.from({ length: 30 }, (_, i) => {
        const url = `http://localhost/v1/track?courier=delhivery&tracking_number=1234567${String(i).padStart(4, "0")}0`;
        const req = new Request(url, { headers: { "x-api-key": a.key } });
        return (i % 2 ? ctx.app : app2).handle(req).then((r) => r.status);
      });
      const statuses = await Promise.all(calls);
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 402)).toHaveLength(25);
    } finally {
      await other.sql.end();
    }
  });
});
