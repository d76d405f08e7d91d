/**
 * The key cache and the key-use stamps do their database work in batches (auth-cache.ts, key-use.ts): many
 * lookups share one statement, an entry in use is reloaded in the background before it expires, and key uses
 * are stamped in one statement per interval, at most once a minute per key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import {
  AuthCache,
  REFRESH_BATCH_MS,
  AUTH_CACHE_TTL_MS,
  type CachedAuth,
} from "../../src/modules/accounts/auth-cache.ts";
import { keyUseFor } from "../helpers/services.ts";
import { listApiKeys } from "../../src/modules/accounts/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";

let ctx: TestContext;
const pools: ReturnType<typeof connect>[] = [];
const caches: AuthCache[] = [];
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(async () => {
  for (const c of caches) c.stop();
  await Promise.all(pools.map((p) => p.sql.end()));
  await ctx.close();
});

/** A pool and key cache of its own for each test, built with the test's loader. */
function newCache(load: ConstructorParameters<typeof AuthCache>[1]) {
  const p = connect(ctx.tdb.url, { max: 2 });
  pools.push(p);
  const cache = new AuthCache(p.db, load);
  caches.push(cache);
  return cache;
}

const auth = (n: number): CachedAuth => ({
  keyId: `key_${n}`,
  account: { id: `acc_${n}`, email: `${n}@example.com`, plan: "free", status: "active" },
});

/** A loader answering from `live` (hash → account), recording each call's hashes. */
function loader(live: Map<string, CachedAuth>) {
  const calls: string[][] = [];
  const load = async (_db: unknown, hashes: string[]) => {
    calls.push([...hashes]);
    return new Map(hashes.filter((h) => live.has(h)).map((h) => [h, live.get(h)!] as const));
  };
  return { calls, load };
}

describe("key cache batches", () => {
  test("lookups started in one turn share one statement; a key asked for many times at once is looked up once", async () => {
    const live = new Map<string, CachedAuth>(Array.from({ length: 10 }, (_, i) => [`batch-hash-${i}`, auth(i)]));
    const { calls, load } = loader(live);
    const cache = newCache(load);
    const hashes = Array.from({ length: 50 }, (_, i) => `batch-hash-${i % 12}`); // 10 live, 2 unknown, each asked 4–5 times
    const answers = await Promise.all(hashes.map((h) => cache.authenticate(h)));
    expect(calls.length).toBe(1);
    expect(calls[0]!.sort()).toEqual([...new Set(hashes)].sort());
    answers.forEach((a, i) => {
      expect(a?.keyId).toBe(live.get(hashes[i]!)?.keyId);
    });
  });

  test("an entry used in the second half of its life is served, then reloaded in one background statement; a key revoked meanwhile is then refused", async () => {
    const live = new Map([
      ["reload-a", auth(100)],
      ["reload-b", auth(101)],
    ]);
    const { calls, load } = loader(live);
    const cache = newCache(load);
    // Cached once this pool's LISTEN is up (entries are stored only then).
    expect(
      await eventually(async () => {
        await Promise.all([...live.keys()].map((h) => cache.authenticate(h)));
        return cache.peek("reload-a") !== undefined && cache.peek("reload-b") !== undefined;
      }),
    ).toBe(true);
    const before = calls.length;
    live.delete("reload-b"); // revoked behind the cache's back (no notification)
    const later = Date.now() + AUTH_CACHE_TTL_MS / 2 + 100;
    expect(cache.peek("reload-a", later)?.keyId).toBe("key_100");
    expect(cache.peek("reload-b", later)?.keyId).toBe("key_101"); // still served while it reloads
    expect(calls.length).toBe(before); // nothing waits for the reload
    expect(await eventually(() => calls.length > before, 10 * REFRESH_BATCH_MS)).toBe(true);
    expect(calls.length).toBe(before + 1);
    expect(calls.at(-1)!.sort()).toEqual(["reload-a", "reload-b"]);
    expect(await eventually(() => cache.peek("reload-b") === null)).toBe(true);
    expect(cache.peek("reload-a")?.keyId).toBe("key_100");
  });

  test("a stopped cache drops its entries and answers from the database alone", async () => {
    const live = new Map([["stop-a", auth(200)]]);
    const { calls, load } = loader(live);
    const cache = newCache(load);
    expect(
      await eventually(
        async () => (await cache.authenticate("stop-a")) !== undefined && cache.peek("stop-a") !== undefined,
      ),
    ).toBe(true);
    cache.stop();
    expect(cache.peek("stop-a")).toBeUndefined();
    const before = calls.length;
    expect((await cache.authenticate("stop-a"))?.keyId).toBe("key_200");
    expect(calls.length).toBe(before + 1);
    expect(cache.peek("stop-a")).toBeUndefined();
  });
});

describe("key-use stamps", () => {
  test("a use is stamped by the next flush, at most once a minute per key; listing the keys writes pending stamps first", async () => {
    const a = await ctx.account("free");
    const stamp = async () => {
      const at = (await ctx.tdb.sql`select last_used_at from api_keys where account_id = ${a.id}`)[0]!.last_used_at;
      return at === null ? null : new Date(at).getTime();
    };
    const t0 = Date.UTC(2026, 10, 23, 12, 0, 0);
    ctx.clock.set(t0);
    expect((await ctx.call("/v1/couriers", { key: a.key }))[0].status).toBe(200);
    const listed = await listApiKeys(ctx.tdb.db, a.id, keyUseFor(ctx.tdb.db));
    expect(listed[0]!.lastUsedAt?.getTime()).toBe(t0);
    // Within the minute: no new stamp, whatever the flushes.
    ctx.clock.set(t0 + 30_000);
    expect((await ctx.call("/v1/couriers", { key: a.key }))[0].status).toBe(200);
    await keyUseFor(ctx.tdb.db).flush();
    expect(await stamp()).toBe(t0);
    // A minute later: stamped again, by the recorder's own timer.
    ctx.clock.set(t0 + 61_000);
    expect((await ctx.call("/v1/couriers", { key: a.key }))[0].status).toBe(200);
    expect(await eventually(async () => (await stamp()) === t0 + 61_000)).toBe(true);
  });
});
