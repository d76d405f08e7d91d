/**
 * The key gate (src/http/auth.ts) through the real app: a key in the auth cache is decided without a promise; a key
 * the cache cannot answer is looked up, and its request passes the router once more (src/http/elysia-quirks.ts)
 * without being counted, logged or identified twice (spec: Authentication 1–3; docs/architecture.md#the-server).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { createLogger } from "../../src/lib/log.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
const lines: Record<string, any>[] = [];
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  ctx = await testContext();
  app = buildApp({ ...ctx.deps, log: createLogger("info", {}, (l) => void lines.push(JSON.parse(l))) });
});
afterAll(() => ctx.close());

const couriers = (key: string, id: string) =>
  new Request("http://localhost/v1/couriers", { headers: { "x-api-key": key, "x-request-id": id } });
const accessLines = (id: string) => lines.filter((l) => l.msg === "request" && l.request_id === id);

describe("the key gate", () => {
  test("a new key waits for its lookup once; then its requests are answered without a promise, each counted once", async () => {
    // The route's own first answers wait for what it loads once (courier health): warm it with another key.
    const other = await ctx.account("starter");
    for (let i = 0; i < 10; i++) {
      const answer = app.fetch(couriers(other.key, `gate-warm-${i}`));
      if (!(answer instanceof Promise)) break;
      await answer;
    }
    const acc = await ctx.account("starter");
    const first = app.fetch(couriers(acc.key, "gate-first"));
    expect(first).toBeInstanceOf(Promise);
    const res1 = await first;
    expect(res1.status).toBe(200);
    const second = app.fetch(couriers(acc.key, "gate-second"));
    expect(second).toBeInstanceOf(Response);
    const res2 = await second;
    expect(res2.status).toBe(200);
    expect(res1.headers.get("ratelimit-limit")).toBe("60");
    expect([res1, res2].map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["59", "58"]);
    expect([res1, res2].map((r) => r.headers.get("x-request-id"))).toEqual(["gate-first", "gate-second"]);
    for (const id of ["gate-first", "gate-second"]) {
      const logged = accessLines(id);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ route: "/v1/couriers", status: 200, account_id: acc.id });
    }
  });

  test("an unknown key is refused after its lookup, and again from the cache (cached as unknown)", async () => {
    const key = `ctk_${"A".repeat(43)}`;
    const refused = await app.fetch(couriers(key, "gate-unknown-1"));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("INVALID_API_KEY");
    expect(refused.headers.get("x-request-id")).toBe("gate-unknown-1");
    expect((await app.fetch(couriers(key, "gate-unknown-2"))).status).toBe(401);
    for (const id of ["gate-unknown-1", "gate-unknown-2"]) {
      expect(accessLines(id)).toHaveLength(1);
      expect(accessLines(id)[0]).toMatchObject({ route: "/v1/couriers", status: 401 });
      expect(accessLines(id)[0]?.account_id).toBeUndefined();
    }
  });
});
