/**
 * The edges a client touches first (docs/api-conventions.md): wrong methods
 * are 405 with `Allow`, HEAD never performs a lookup, one JSON content type
 * on every answer, RateLimit-* headers on every /v1 and demo answer, the
 * demo's 429 says where to get a key, validation reports every problem of a
 * webhook body at once, and a webhook answers with what was stored.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let key: string;
let accountId: string;
beforeAll(async () => {
  ctx = await testContext({ COURIER_MODE: "sandbox", WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8" });
  const acc = await ctx.account("growth");
  key = acc.key;
  accountId = acc.id;
});
afterAll(() => ctx.close());

const JSON_TYPE = "application/json;charset=utf-8";

describe("wrong method: 405 METHOD_NOT_ALLOWED with Allow", () => {
  test.each([
    ["POST", "/v1/track?courier=dhl&tracking_number=1234567890", "GET"],
    ["DELETE", "/v1/couriers", "GET"],
    ["PUT", "/v1/couriers/dhl", "GET"],
    ["GET", "/v1/webhooks/rotate-secret", "POST"],
    ["PATCH", "/v1/webhooks", "GET, POST"],
  ])("%s %s", async (method, path, allow) => {
    const [res, body] = await ctx.call(path, { method, key });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    expect(body.error.code).toBe("METHOD_NOT_ALLOWED");
    expect(res.headers.get("content-type")).toBe(JSON_TYPE);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("the key is still checked first (401), and an unknown path with a key is still 404", async () => {
    const [noKey] = await ctx.call("/v1/couriers", { method: "DELETE" });
    expect(noKey.status).toBe(401);
    const [unknown, body] = await ctx.call("/v1/nope", { method: "DELETE", key });
    expect(unknown.status).toBe(404);
    expect(body.error.code).toBe("NOT_FOUND");
  });

  test("a webhook id that is not a static segment is still looked up (404 WEBHOOK_NOT_FOUND)", async () => {
    const [res, body] = await ctx.call("/v1/webhooks/wh_nope", { key });
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("WEBHOOK_NOT_FOUND");
  });
});

describe("HEAD", () => {
  test("HEAD /v1/track performs no lookup and spends no quota: 405, Allow: GET", async () => {
    const before = await ctx.tdb
      .sql`select coalesce(sum(used), 0)::int as used from usage_counters where account_id = ${accountId}`;
    const res = await ctx.app.handle(
      new Request("http://localhost/v1/track?courier=delhivery&tracking_number=1234567890120", {
        method: "HEAD",
        headers: { "x-api-key": key },
      }),
    );
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    const after = await ctx.tdb
      .sql`select coalesce(sum(used), 0)::int as used from usage_counters where account_id = ${accountId}`;
    expect(after[0]!.used).toBe(before[0]!.used);
    const followed = await ctx.tdb
      .sql`select count(*)::int as n from shipments where tracking_number = '1234567890120'`;
    expect(followed[0]!.n).toBe(0);
  });
});

describe("one content type and RateLimit-* on every answer", () => {
  test("success, 404, 422 and 401 all say application/json;charset=utf-8", async () => {
    const answers = await Promise.all([
      ctx.call("/v1/couriers", { key }),
      ctx.call("/v1/couriers/nope", { key }),
      ctx.call("/v1/track?courier=dhl", { key }),
      ctx.call("/v1/couriers"),
      ctx.call("/billing/plans"),
    ]);
    for (const [res] of answers) expect(res.headers.get("content-type")).toBe(JSON_TYPE);
  });

  test("a 422 on /v1 carries RateLimit-*; an account over its limit gets 429, not 422", async () => {
    const [res] = await ctx.call("/v1/track?courier=dhl", { key });
    expect(res.status).toBe(422);
    expect(res.headers.get("ratelimit-limit")).toBeTruthy();
    expect(res.headers.get("ratelimit-remaining")).toBeTruthy();
  });

  test("the demo sends RateLimit-* on every answer, and its 429 names the sign-up page", async () => {
    const ip = { "x-forwarded-for": "203.0.113.77" };
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [res] = await ctx.call("/demo/track?courier=dhl", { headers: ip }); // 422: no tracking number
      expect(res.status).toBe(422);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const [res, body] = await ctx.call("/demo/track?courier=dhl&tracking_number=1234567890", { headers: ip });
    expect(res.status).toBe(429);
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    expect(body.error.message).toContain(`${ctx.config.publicBaseUrl}/dashboard/sign-up`);
  });
});

describe("webhook bodies", () => {
  test("every problem is reported at once, one item per field, the URL included", async () => {
    const [res, body] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({ url: "ftp://x", events: "tracking.delivered", mode: "prod", description: 5 }),
    });
    expect(res.status).toBe(422);
    const byField = Object.fromEntries(
      body.detail.map((d: { loc: string[]; type: string }) => [d.loc.slice(1).join("."), d.type]),
    );
    expect(byField).toEqual({ url: "url_scheme", events: "list_type", mode: "enum", description: "string_type" });
  });

  test("a 5,000-character description is string_too_long with its maximum", async () => {
    const [res, body] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({
        url: "https://hooks.example.com/x",
        events: ["tracking.delivered"],
        mode: "test",
        description: "d".repeat(5000),
      }),
    });
    expect(res.status).toBe(422);
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0].type).toBe("string_too_long");
    expect(body.detail[0].msg).toMatch(/at most \d+ characters/);
  });

  test("port 0 is refused", async () => {
    const [res, body] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({ url: "https://example.com:0/", events: ["tracking.delivered"], mode: "test" }),
    });
    expect(res.status).toBe(422);
    expect(body.detail[0].loc).toEqual(["body", "url"]);
  });

  test("the answer is what was stored: the normalised URL and the events without duplicates, in order", async () => {
    const [res, body] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({
        url: "https://X.Example.com",
        events: ["tracking.delivered", "tracking.updated", "tracking.delivered"],
        mode: "test",
      }),
    });
    expect(res.status).toBe(201);
    expect(body.data.url).toBe("https://x.example.com/");
    expect(body.data.events).toEqual(["tracking.delivered", "tracking.updated"]);
    const [, again] = await ctx.call(`/v1/webhooks/${body.data.id}`, { key });
    expect(again.data.url).toBe(body.data.url);
    expect(again.data.events).toEqual(body.data.events);
  });
});
