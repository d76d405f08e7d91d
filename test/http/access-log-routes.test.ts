/**
 * The access log and the HTTP histogram label a `/v1` request the key gate refused (401, 429) with the route
 * template it would have matched, never the raw path; a path no route serves stays `unmatched`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { createLogger } from "../../src/lib/log.ts";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
const lines: Record<string, any>[] = [];
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  ctx = await testContext();
  app = buildApp({
    ...ctx.deps,
    log: createLogger("info", { service: "courier-tracking-api" }, (l) => void lines.push(JSON.parse(l))),
  });
});
afterAll(() => ctx.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://localhost${path}`, { headers }));
const access = () => lines.filter((l) => l.msg === "request").map((l) => [l.method, l.route, l.status]);

describe("routes of refused requests", () => {
  test("401 before routing: the route template the request would have matched, in the access line and the histogram", async () => {
    lines.length = 0;
    expect((await get("/v1/couriers/dhl")).status).toBe(401);
    expect((await get("/v1/couriers", { "x-api-key": "ck_live_not-a-key" })).status).toBe(401);
    expect((await get("/v1/webhooks/wh_123/deliveries")).status).toBe(401);
    expect((await get("/v1/no-such-thing")).status).toBe(401);
    expect(access()).toEqual([
      ["GET", "/v1/couriers/:slug", 401],
      ["GET", "/v1/couriers", 401],
      ["GET", "/v1/webhooks/:webhook_id/deliveries", 401],
      ["GET", "unmatched", 401],
    ]);
    expect(JSON.stringify(lines)).not.toContain("/v1/couriers/dhl");
    const metrics = await serviceRegistry.metrics();
    expect(metrics).toMatch(/_count\{[^}]*route="\/v1\/couriers\/:slug"[^}]*status="401"[^}]*\} [1-9]/);
    expect(metrics).not.toMatch(/route="\/v1\/couriers\/dhl"/);
  });

  test("a path served under other methods is labelled with its template too", async () => {
    lines.length = 0;
    expect((await get("/v1/webhooks/wh_123")).status).toBe(401);
    expect(access()).toEqual([["GET", "/v1/webhooks/:webhook_id", 401]]);
  });
});
