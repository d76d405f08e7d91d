/**
 * Log lines and request ids through the real app on a real database (docs/logging.md, "Request ids"): every
 * line a request causes carries the `request_id` of its access line, and the access line carries no value
 * from the request's headers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { createLogger } from "../../src/lib/log.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
const lines: Record<string, any>[] = [];
let app: ReturnType<typeof buildApp>;
let log: ReturnType<typeof createLogger>;

beforeAll(async () => {
  ctx = await testContext();
  log = createLogger("info", { service: "courier-tracking-api" }, (l) => void lines.push(JSON.parse(l)));
  app = buildApp({ ...ctx.deps, log });
});
afterAll(() => ctx.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://localhost${path}`, { headers }));

describe("request ids in log lines", () => {
  test("`courier lookup failed` carries the request id of its access line, for concurrent requests too", async () => {
    const acc = await ctx.account("growth");
    lines.length = 0;
    // Sandbox digit 6: the courier fails (502, logged), digit 4: not found (logged); sent together.
    const paths = [
      "/v1/track?courier=delhivery&tracking_number=1234567890016",
      "/v1/track?courier=delhivery&tracking_number=1234567890024",
    ];
    const answers = await Promise.all([...paths, ...paths].map((p) => get(p, { "x-api-key": acc.key })));
    expect(answers.map((r) => r.status).sort()).toEqual([404, 404, 502, 502]);
    const ids = answers.map((r) => r.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(4);

    const failed = lines.filter((l) => l.msg === "courier lookup failed");
    expect(failed).toHaveLength(4);
    const access = lines.filter((l) => l.msg === "request");
    expect(access.map((l) => l.request_id).sort()).toEqual([...ids].sort());
    // Each failure line names the request whose access line reports the matching failure.
    for (const f of failed) {
      const mine = access.find((a) => a.request_id === f.request_id);
      expect(mine).toBeDefined();
      expect(mine!.status).toBe(f.kind === "not_found" ? 404 : 502);
    }
    expect(new Set(failed.map((f) => f.request_id)).size).toBe(4);
  });

  test("a client's well-formed X-Request-Id is the id of its log lines and its answer", async () => {
    const acc = await ctx.account("growth");
    lines.length = 0;
    const res = await get("/v1/track?courier=delhivery&tracking_number=1234567890034", {
      "x-api-key": acc.key,
      "x-request-id": "client-trace.42",
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe("client-trace.42");
    expect(
      lines.filter((l) => l.msg === "courier lookup failed" || l.msg === "request").map((l) => l.request_id),
    ).toEqual(["client-trace.42", "client-trace.42"]);
  });

  test("lines logged outside any request carry no request id", async () => {
    lines.length = 0;
    await get("/v1/couriers", {});
    log.info("outside");
    expect(lines.map((l) => [l.msg, typeof l.request_id])).toEqual([
      ["request", "string"],
      ["outside", "undefined"],
    ]);
  });
});

describe("access lines", () => {
  test("carry only their fixed fields: no header value reaches them", async () => {
    const acc = await ctx.account("growth");
    const secrets = {
      "x-api-key": acc.key,
      authorization: "Bearer tok_secret_authorization_value",
      cookie: "ct_session=session_secret_cookie_value",
      "x-forwarded-for": "203.0.113.77",
      "user-agent": "agent-with-a-marker-value",
      "x-custom-token": "custom_secret_header_value",
    };
    lines.length = 0;
    for (const path of [
      "/v1/couriers",
      "/v1/couriers/nope",
      "/dashboard",
      "/v1/track?courier=delhivery&tracking_number=1234567890040",
    ])
      await get(path, secrets);
    const access = lines.filter((l) => l.msg === "request");
    expect(access).toHaveLength(4);
    const allowed = new Set([
      "level",
      "time",
      "service",
      "msg",
      "method",
      "route",
      "status",
      "duration_ms",
      "request_id",
      "account_id",
    ]);
    for (const a of access) for (const k of Object.keys(a)) expect([k, allowed.has(k)]).toEqual([k, true]);
    const text = JSON.stringify(access);
    for (const v of Object.values(secrets)) expect(text).not.toContain(v);
    expect(text).not.toContain("1234567890040"); // the query (a tracking number) is not logged either
  });
});
