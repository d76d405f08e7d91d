/**
 * Query and path parameters against the real app (real PostgreSQL): type, range and format problems are 422
 * with `loc: ["query", name]` / `["path", name]`, every problem at once, before the handler runs; string
 * lengths in characters. See src/http/validation.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let key: string;
let webhookId: string;

beforeAll(async () => {
  ctx = await testContext();
  key = (await ctx.account("business")).key;
  const [, b] = await ctx.call("/v1/webhooks", {
    method: "POST",
    key,
    body: JSON.stringify({ url: "https://hooks.params.invalid/a", events: ["tracking.delivered"], mode: "test" }),
  });
  webhookId = b.data.id;
});
afterAll(() => ctx.close());

const items = (b: any) => b.detail.map((i: any) => [i.loc.join("."), i.type]);

describe("limit", () => {
  const lists = () => ["/v1/shipments", "/v1/events", `/v1/webhooks/${webhookId}/deliveries`];

  test("a non-integer is 422 int_parsing at query.limit on every list (it used to reach PostgreSQL: 500)", async () => {
    for (const path of lists())
      for (const v of ["2.5", "1e1", "0x10", "%205", "abc", "", "5.0"]) {
        const [r, b] = await ctx.call(`${path}?limit=${v}`, { key });
        expect([path, v, r.status, items(b)]).toEqual([path, v, 422, [["query.limit", "int_parsing"]]]);
      }
  });

  test("out of range is 422 at query.limit; in range is 200", async () => {
    for (const path of lists()) {
      for (const [v, type] of [
        ["0", "greater_than_equal"],
        ["-0", "greater_than_equal"],
        ["101", "less_than_equal"],
        ["99999999999999999999999", "less_than_equal"],
      ]) {
        const [r, b] = await ctx.call(`${path}?limit=${v}`, { key });
        expect([path, v, r.status, b.detail]).toEqual([
          path,
          v,
          422,
          [{ loc: ["query", "limit"], msg: expect.any(String), type }],
        ]);
      }
      for (const v of ["1", "100", "007"])
        expect([path, v, (await ctx.call(`${path}?limit=${v}`, { key }))[0].status]).toEqual([path, v, 200]);
    }
  });

  test("every problem at once: limit's is not lost beside another parameter's", async () => {
    const [r1, b1] = await ctx.call("/v1/shipments?limit=101&state=lost&updated_since=yesterday&cursor=%00", { key });
    expect([r1.status, items(b1).sort()]).toEqual([
      422,
      [
        ["query.cursor", "string_pattern_mismatch"],
        ["query.limit", "less_than_equal"],
        ["query.state", "enum"],
        ["query.updated_since", "string_pattern_mismatch"],
      ],
    ]);
    const [r2, b2] = await ctx.call(`/v1/webhooks/${"x".repeat(101)}/deliveries?limit=2.5&cursor=${"c".repeat(101)}`, {
      key,
    });
    expect([r2.status, items(b2)]).toEqual([
      422,
      [
        ["path.webhook_id", "string_too_long"],
        ["query.limit", "int_parsing"],
        ["query.cursor", "string_too_long"],
      ],
    ]);
  });
});

describe("path parameters", () => {
  test("type and format problems name the path parameter", async () => {
    const cases: [string, string[][]][] = [
      ["/v1/shipments/%00/1234", [["path.courier", "string_pattern_mismatch"]]],
      [`/v1/shipments/dhl/${"9".repeat(65)}`, [["path.tracking_number", "string_too_long"]]],
      ["/v1/couriers/%FF", [["path.slug", "string_unicode"]]],
      ["/v1/couriers/a%01b", [["path.slug", "string_pattern_mismatch"]]],
      [`/v1/webhooks/${webhookId}/deliveries/%7F/redeliver`, [["path.delivery_id", "string_pattern_mismatch"]]],
    ];
    for (const [path, expected] of cases) {
      const method = path.endsWith("redeliver") ? "POST" : "GET";
      const [r, b] = await ctx.call(path, { key, method });
      expect([path, r.status, items(b)]).toEqual([path, 422, expected]);
    }
  });
});

describe("lengths in characters", () => {
  test("33 emoji pass a 64-character limit (query); 65 do not", async () => {
    const e = "📦";
    const [r1, b1] = await ctx.call(`/v1/track?courier=${encodeURIComponent(e.repeat(33))}&tracking_number=1`, { key });
    expect([r1.status, b1.error?.code]).toEqual([404, "COURIER_NOT_FOUND"]);
    const [r2, b2] = await ctx.call(`/v1/shipments?courier=${encodeURIComponent(e.repeat(64))}`, { key });
    expect(r2.status).toBe(200);
    expect(b2.data.count).toBe(0);
    const [r3, b3] = await ctx.call(`/v1/shipments?courier=${encodeURIComponent(e.repeat(65))}`, { key });
    expect([r3.status, items(b3)]).toEqual([422, [["query.courier", "string_too_long"]]]);
  });

  test("a body field too: a 500-character description of 500 emoji is stored whole", async () => {
    const description = "📦".repeat(500);
    const [r, b] = await ctx.call(`/v1/webhooks/${webhookId}`, {
      method: "PUT",
      key,
      body: JSON.stringify({ description }),
    });
    expect([r.status, b.data?.description]).toEqual([200, description]);
    const [r2, b2] = await ctx.call(`/v1/webhooks/${webhookId}`, {
      method: "PUT",
      key,
      body: JSON.stringify({ description: description + "x" }),
    });
    expect([r2.status, items(b2)]).toEqual([422, [["body.description", "string_too_long"]]]);
  });
});
