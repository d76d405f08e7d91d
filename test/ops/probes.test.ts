/**
 * Probes, metrics and the access log through the real app on a real
 * database (docs/deployment.md): probes answer behind a TLS proxy without
 * X-Forwarded-Proto and without a key; readiness is 503 while draining or
 * while the schema is behind; `/metrics` on the public port needs the
 * bearer token; one JSON access line per request with the route template.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/configure.ts";
import { createLogger } from "../../src/lib/log.ts";
import { startAdminServer } from "../../src/modules/health/admin-server.ts";
import { createLifecycle } from "../../src/modules/health/state.ts";
import { isProbeRequest } from "../../src/modules/health/state.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import pkg from "../../package.json" with { type: "json" };

const TOKEN = "metrics-token-for-tests-0123";
let ctx: TestContext;
const lines: Record<string, any>[] = [];
const lifecycle = createLifecycle();
let proxied: ReturnType<typeof buildApp>;

beforeAll(async () => {
  ctx = await testContext({ METRICS_TOKEN: TOKEN });
  const log = createLogger("info", {}, (l) => lines.push(JSON.parse(l)));
  // Behind a TLS proxy (TRUST_PROXY), with a draining flag the test controls.
  proxied = buildApp({
    ...ctx.deps,
    log,
    lifecycle,
    config: loadConfig({ TRUST_PROXY: "1", COURIER_MODE: "sandbox", METRICS_TOKEN: TOKEN }),
  });
});
afterAll(() => ctx.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  proxied.handle(new Request(`http://localhost${path}`, { headers }));

describe("probes behind a TLS-terminating proxy", () => {
  test("/healthz and /readyz answer 200 without X-Forwarded-Proto and without a key; other paths still need https", async () => {
    for (const path of ["/healthz", "/readyz", "/healthz?x=1"]) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(await res.json()).toEqual(
        path.startsWith("/healthz") ? { status: "ok", version: pkg.version } : { status: "ok" },
      );
    }
    const other = await get("/v1/couriers");
    expect(other.status).toBe(400);
    expect(((await other.json()) as any).error.code).toBe("HTTPS_REQUIRED");
  });

  test("the probe predicate reads only the path, and survives malformed URLs", () => {
    expect(isProbeRequest("http://localhost/healthz")).toBe(true);
    expect(isProbeRequest("http://a b/readyz?z")).toBe(true);
    expect(isProbeRequest("/readyz")).toBe(true);
    expect(isProbeRequest("http://localhost/healthz/x")).toBe(false);
    expect(isProbeRequest("http://localhost/v1/healthz")).toBe(false);
    expect(isProbeRequest("http://localhost")).toBe(false);
  });

  test("readiness is 503 while draining, and again 200 when not", async () => {
    lifecycle.draining = true;
    const res = await get("/readyz");
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.success).toBe(false);
    expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
    expect(body.error.message).toContain("shutting down");
    expect((await get("/healthz")).status).toBe(200); // still alive
    lifecycle.draining = false;
    expect((await get("/readyz")).status).toBe(200);
  });

  test("readiness is 503 while the database schema is behind this build", async () => {
    // A fresh app (readiness remembers a schema once seen at head).
    const [last] = await ctx.tdb
      .sql`select id, hash, created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    await ctx.tdb.sql`delete from drizzle.__drizzle_migrations where id = ${last!.id}`;
    try {
      const fresh = buildApp({ ...ctx.deps, lifecycle: createLifecycle() });
      const res = await fresh.handle(new Request("http://localhost/readyz"));
      expect(res.status).toBe(503);
      expect(((await res.json()) as any).error.message).toContain("migrations");
    } finally {
      await ctx.tdb
        .sql`insert into drizzle.__drizzle_migrations (id, hash, created_at) values (${last!.id}, ${last!.hash}, ${last!.created_at})`;
    }
    expect(
      (await buildApp({ ...ctx.deps, lifecycle: createLifecycle() }).handle(new Request("http://localhost/readyz")))
        .status,
    ).toBe(200);
  });

  test("readiness is 503 while the process is still starting (the internal port is up before the API listens)", async () => {
    const starting = createLifecycle({ starting: true });
    const admin = startAdminServer(ctx.deps, { host: "127.0.0.1", port: 0, lifecycle: starting });
    try {
      const before = await fetch(`http://127.0.0.1:${admin.port}/readyz`);
      expect(before.status).toBe(503);
      expect(((await before.json()) as any).error.message).toContain("still starting");
      starting.starting = false;
      expect((await fetch(`http://127.0.0.1:${admin.port}/readyz`)).status).toBe(200);
    } finally {
      await admin.stop();
    }
  });
});

describe("/metrics on the public port", () => {
  test("needs Authorization: Bearer METRICS_TOKEN (401 otherwise); 404 when no token is configured", async () => {
    const none = await get("/metrics", { "x-forwarded-proto": "https" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await get("/metrics", { "x-forwarded-proto": "https", authorization: `Bearer ${TOKEN}x` })).status).toBe(
      401,
    );
    const ok = await get("/metrics", { "x-forwarded-proto": "https", authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain(`courier_tracking_build_info{version="${pkg.version}"} 1\n`);

    const closed = buildApp({ ...ctx.deps, config: loadConfig({ COURIER_MODE: "sandbox" }) });
    const res = await closed.handle(
      new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(res.status).toBe(404);
  });

  test("carries process, HTTP, courier, delivery, outbox and re-check series", async () => {
    const acc = await ctx.account("growth");
    const [track] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key: acc.key });
    expect(track.status).toBe(200);
    const [, text] = await ctx.call("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "courier_tracking_http_request_duration_seconds_bucket",
      "courier_tracking_webhook_delivery_attempts_total",
      "courier_tracking_webhook_delivery_latency_seconds",
      "courier_tracking_webhooks_deactivated_total",
      "courier_tracking_outbox_due",
      "courier_tracking_outbox_oldest_due_age_seconds",
      "courier_tracking_recheck_lag_seconds",
      "courier_tracking_recheck_due_backlog",
    ])
      expect([name, text.includes(`# TYPE ${name.replace(/_bucket$/, "")} `)]).toEqual([name, true]);
    // The HTTP series is labelled by route template, method and status, never the raw path.
    expect(text).toMatch(
      /courier_tracking_http_request_duration_seconds_count\{route="\/v1\/track",method="GET",status="200"\} [1-9]/,
    );
    expect(text).not.toContain("1234567890120");
    expect(text).not.toContain(acc.id);
  });

  test("courier calls are timed by courier and outcome (adapters instrumented as main.ts does)", async () => {
    const { createCourierBackends } = await import("../../src/modules/couriers/registry.ts");
    const { ADAPTERS } = await import("../../src/modules/couriers/adapters/index.ts");
    const { instrumentAdapters } = await import("../../src/modules/couriers/instrument.ts");
    const { courierBySlug } = await import("../../src/modules/couriers/catalogue.ts");
    const backends = createCourierBackends({
      config: ctx.config,
      clock: ctx.clock,
      log: ctx.deps.log,
      simulator: ctx.sim,
      adapters: instrumentAdapters(ADAPTERS),
    });
    try {
      await backends.lookup(courierBySlug("bluedart")!, "50112345670");
      await expect(backends.lookup(courierBySlug("bluedart")!, "50112345676")).rejects.toThrow(); // scenario 6: the backend fails
    } finally {
      await backends.close();
    }
    const [, text] = await ctx.call("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(text).toMatch(/courier_tracking_courier_call_duration_seconds_count\{courier="bluedart",outcome="ok"\} 1\n/);
    expect(text).toMatch(
      /courier_tracking_courier_call_duration_seconds_count\{courier="bluedart",outcome="backend"\} 1\n/,
    );
  });
});

describe("access log", () => {
  test("one JSON line per request: method, route template, status, duration, request id, account id; never the key", async () => {
    const acc = await ctx.account("growth");
    lines.length = 0;
    const res = await get("/v1/couriers/dhl", { "x-forwarded-proto": "https", "x-api-key": acc.key });
    expect(res.status).toBe(200);
    const bad = await get("/v1/couriers/nope", { "x-forwarded-proto": "https", "x-api-key": acc.key });
    expect(bad.status).toBe(404);
    const refused = await get("/v1/couriers"); // answered before routing: HTTPS_REQUIRED
    expect(refused.status).toBe(400);
    const access = lines.filter((l) => l.msg === "request");
    expect(access.map((l) => [l.method, l.route, l.status])).toEqual([
      ["GET", "/v1/couriers/:slug", 200],
      ["GET", "/v1/couriers/:slug", 404],
      ["GET", "unmatched", 400],
    ]);
    expect(access[0]!.request_id).toBe(res.headers.get("x-request-id"));
    expect(access[0]!.account_id).toBe(acc.id);
    // Answers after authentication that are not successes still name the account.
    expect(access[1]!.account_id).toBe(acc.id);
    expect(typeof access[0]!.duration_ms).toBe("number");
    expect(JSON.stringify(lines)).not.toContain(acc.key);
    expect(JSON.stringify(lines)).not.toContain("/v1/couriers/dhl");

    // A 422 is answered by validation, before any handler resolves `auth`: the key gate's record names the account.
    lines.length = 0;
    const invalid = await get("/v1/track?courier=dhl", { "x-forwarded-proto": "https", "x-api-key": acc.key });
    expect(invalid.status).toBe(422);
    expect(lines.filter((l) => l.msg === "request").map((l) => [l.status, l.account_id])).toEqual([[422, acc.id]]);
  });

  test("probes are logged at debug only", async () => {
    lines.length = 0;
    await get("/healthz");
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
  });
});

describe("couriers say whether they are available and whether they answer from the sandbox", () => {
  test("sandbox mode: every courier available from the sandbox; live mode without credentials: unavailable except the configured one", async () => {
    const acc = await ctx.account("growth");
    const [, list] = await ctx.call("/v1/couriers", { key: acc.key });
    expect(list.data.couriers.every((c: any) => c.available === true && c.sandbox === true)).toBe(true);

    const { createCourierBackends } = await import("../../src/modules/couriers/registry.ts");
    const config = loadConfig({
      DATABASE_URL: "postgres://u@127.0.0.1:9/x",
      DHL_API_KEY: "k",
      DHL_BASE_URL: "http://127.0.0.1:9",
    });
    expect(config.courierMode).toBe("live");
    const backends = createCourierBackends({ config, clock: ctx.clock, log: ctx.deps.log });
    try {
      const live = buildApp({ ...ctx.deps, config, backends });
      const res = await live.handle(new Request("http://localhost/v1/couriers", { headers: { "x-api-key": acc.key } }));
      const body = (await res.json()) as any;
      const bySlug = Object.fromEntries(body.data.couriers.map((c: any) => [c.slug, c]));
      // No calls yet: every courier's health is unknown (docs/courier-health.md).
      const health = { state: "unknown", since: null, success_share_15m: null, p95_ms_15m: null };
      expect(bySlug.dhl).toEqual({
        slug: "dhl",
        name: "DHL",
        available: true,
        sandbox: false,
        rate_budget: { per_second: 0.2, per_day: 250, covers_followed: null },
        actions: [],
        health,
      });
      expect(bySlug.delhivery).toEqual({
        slug: "delhivery",
        name: "Delhivery",
        available: false,
        sandbox: false,
        rate_budget: null,
        actions: [], // unavailable: no action can reach it
        health,
      });
      const one = (await (
        await live.handle(new Request("http://localhost/v1/couriers/ups", { headers: { "x-api-key": acc.key } }))
      ).json()) as any;
      expect(one.data).toEqual({
        slug: "ups",
        name: "UPS",
        available: false,
        sandbox: false,
        rate_budget: null,
        actions: [],
        health,
      });
    } finally {
      await backends.close();
    }
  });
});

describe("the internal port", () => {
  test("answers its probes in plain HTTP, and a malformed Host with 400 in the envelope (never Bun's error page)", async () => {
    const { startAdminServer } = await import("../../src/modules/health/admin-server.ts");
    const { rawRequest } = await import("../helpers/raw-http.ts");
    const admin = startAdminServer(ctx.deps, { host: "127.0.0.1", port: 0, lifecycle: createLifecycle() });
    try {
      const ok = await fetch(`http://127.0.0.1:${admin.port}/healthz`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ status: "ok", version: pkg.version });
      for (const host of ["a b", "[", "x:99999"]) {
        const res = await rawRequest(admin.port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        // Bun itself refuses some of these before our code runs (bare 400); what reaches us is enveloped.
        expect(res.status).toBeLessThan(500);
        if (res.body) expect(res.body).not.toContain("<html");
      }
    } finally {
      await admin.stop();
    }
  });
});
