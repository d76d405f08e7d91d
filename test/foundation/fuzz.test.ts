/**
 * A bounded fuzz run against the real server on loopback: a fixed number of
 * requests (bounded by count, not time), seeded so a failure reproduces,
 * across every operation of `/openapi.json` and every dashboard route, with
 * random and hostile values — nested and oversize JSON, NUL bytes, invalid
 * UTF-8 and percent-encoding, wrong types, wrong methods, bad Host headers,
 * bad cookies — with and without a valid key or session. Asserts: no 5xx;
 * every API body in a documented shape (the error envelope with a documented
 * code, the 422 body, or the operation's documented success schema); every
 * dashboard answer HTML or a same-site redirect; no stack frame, source path
 * or SQL in any body; and RSS that does not grow without bound.
 *
 * NETWORK SAFETY: the only sockets are to 127.0.0.1. Webhook URLs come from a
 * fixed list (`.invalid` names, private and loopback addresses) and the app's
 * resolver answers nothing, so a test fire never leaves the machine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createSession, resolveSession } from "../../src/modules/dashboard/session.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { rawRequest } from "../helpers/raw-http.ts";
import { docValidator, type DocValidator } from "../client/openapi.ts";
import {
  CONTENT_TYPES,
  EVENTS,
  isErrorCode,
  LEAKS,
  METHODS,
  prng,
  RAW_ESCAPES,
  SAFE_URLS,
  SLUGS,
  STRINGS,
} from "../helpers/hostile-requests.ts";

const SEED = 0x5eed_2026;
const API_REQUESTS = 2400;
const DASHBOARD_REQUESTS = 600;
const BAD_HOST_REQUESTS = 60;
const CONCURRENCY = 8;

const rand = prng(SEED);
const int = (n: number) => Math.floor(rand() * n);
const chance = (p: number) => rand() < p;
const pick = <T>(a: readonly T[]): T => a[int(a.length)]!;

// ---- values (the lists are the shared hostile-request helpers') ------------------------------

function hostileJson(depth = 0): unknown {
  switch (int(depth > 6 ? 4 : 9)) {
    case 0:
      return pick(STRINGS);
    case 1:
      return pick([0, -1, 1.5, 1e308, 2 ** 53 + 1, -0, 123456789]);
    case 2:
      return chance(0.5);
    case 3:
      return null;
    case 4:
      return Array.from({ length: int(5) }, () => hostileJson(depth + 1));
    case 5:
      return Object.fromEntries(
        Array.from({ length: int(5) }, () => [
          pick([...STRINGS.slice(0, 30), "url", "events", "mode", "description", "event", "status"]),
          hostileJson(depth + 1),
        ]),
      );
    case 6: {
      let nested: unknown = [];
      for (let n = 10 + int(40); n > 0; n--) nested = [nested];
      return nested;
    }
    case 7:
      return Array.from({ length: 2000 }, () => 7);
    default:
      return validWebhookBody();
  }
}

function validWebhookBody(): Record<string, unknown> {
  return {
    url: pick(SAFE_URLS),
    events: EVENTS.filter(() => chance(0.5)),
    mode: pick(["test", "live"]),
    ...(chance(0.5) ? { description: chance(0.8) ? pick(STRINGS) : null } : {}),
  };
}

/** A request body for a JSON operation: mostly plausible, often broken. */
function jsonBody(): string | Uint8Array {
  switch (int(12)) {
    case 0:
      return "[".repeat(1 + int(40_000)) + "]".repeat(int(3));
    case 1:
      return pick(["{", "[1,]", '{"a":}', "\u0000", "nul", '"\\ud800"', "{}".repeat(100)]);
    case 2:
      return new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    case 3:
      return JSON.stringify({ ...validWebhookBody(), pad: "x".repeat(70_000) });
    case 4:
      return "";
    case 5:
      return '{"__proto__":{"polluted":1},"url":"https://hooks.fuzz.invalid/","events":["tracking.delivered"],"mode":"test"}';
    case 6:
    case 7: {
      const body = validWebhookBody();
      body[pick(["url", "events", "mode", "description", "status", "event", "extra"])] = hostileJson();
      return JSON.stringify(body);
    }
    case 8:
      return JSON.stringify({ event: chance(0.5) ? pick(EVENTS) : hostileJson() });
    default:
      return JSON.stringify(chance(0.5) ? validWebhookBody() : hostileJson());
  }
}

/** One path segment or query value: percent-encoded hostile text, or raw broken escapes. */
function urlValue(valid: string[]): string {
  if (chance(0.4) && valid.length) return encodeURIComponent(pick(valid));
  if (chance(0.2)) return pick(RAW_ESCAPES) + pick(["", "a", "1"]);
  const s = pick(STRINGS);
  try {
    return encodeURIComponent(s);
  } catch {
    return "%ED%A0%80"; // a lone surrogate has no UTF-8 form; send its CESU-8 bytes instead
  }
}

/** A header value `fetch` accepts (printable latin1 only). */
const headerValue = () => pick(STRINGS.filter((s) => /^[\x20-\x7e]{0,200}$/.test(s)));

// ---- the server ---------------------------------------------------------------------------

let ctx: TestContext;
let port: number;
let base: string;
let v: DocValidator;
const keys: string[] = [];
const webhookIds: string[] = [];
let session: { cookie: string; csrf: string };
let webhookForDashboard = "";
const noResolution: Resolver = async (host) => {
  throw Object.assign(new Error(`fuzz: no DNS for ${host}`), { code: "ENOTFOUND" });
};

beforeAll(async () => {
  ctx = await testContext({}, { resolver: noResolution } as never);
  ctx.app.listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024 * 1024, development: false });
  port = ctx.app.server!.port!;
  base = `http://127.0.0.1:${port}`;
  v = docValidator(await (await fetch(`${base}/openapi.json`)).json());
  for (let i = 0; i < 3; i++) {
    const a = await ctx.account("business");
    keys.push(a.key);
    const res = await fetch(`${base}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": a.key },
      body: JSON.stringify({ url: "https://hooks.fuzz.invalid/a", events: ["tracking.delivered"], mode: "test" }),
    });
    webhookIds.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  const dash = await ctx.account("growth");
  const hook = await fetch(`${base}/v1/webhooks`, {
    method: "POST",
    headers: { "x-api-key": dash.key },
    body: JSON.stringify({ url: "https://hooks.fuzz.invalid/d", events: ["tracking.delivered"], mode: "test" }),
  });
  webhookForDashboard = ((await hook.json()) as { data: { id: string } }).data.id;
  const s = await createSession(ctx.deps.db, ctx.clock, dash.id);
  session = {
    cookie: `ct_session=${s.token}`,
    csrf: (await resolveSession(ctx.deps.db, ctx.clock, s.token))!.csrfToken,
  };
});
afterAll(async () => {
  await ctx.app.stop(true);
  await ctx.close();
});

// ---- checks -------------------------------------------------------------------------------

const failures: string[] = [];

function checkApi(what: string, method: string, path: string, status: number, contentType: string, text: string) {
  const fail = (why: string) =>
    failures.push(`${what} → ${status}: ${why}; body ${text.slice(0, 300).replace(/\s+/g, " ")}`);
  if (status >= 500) return fail("5xx");
  if (LEAKS.test(text)) return fail("leaks internals");
  if (method === "HEAD" || status === 204) return text === "" ? undefined : fail("body on HEAD/204");
  if (!contentType.startsWith("application/json")) return fail(`content type ${contentType}`);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return fail("not JSON");
  }
  if (status === 422) {
    const errs = v.errors(body, "components", "schemas", "ValidationError");
    return errs.length ? fail(`422 shape ${errs}`) : undefined;
  }
  if (status >= 400) {
    const errs = v.errors(body, "components", "schemas", "Error");
    if (errs.length || !isErrorCode(body.error?.code)) return fail(`error envelope ${errs}`);
    return;
  }
  // Elysia matches a path with or without its trailing slash (`/v1/couriers/` is the list).
  const found = v.operation(method, new URL(path, base).pathname.replace(/(.)\/$/, "$1"));
  const response = found?.op.responses[String(status)];
  if (!found || !response) return fail("undocumented success");
  const errs = v.errors(
    body,
    "paths",
    found.template,
    method.toLowerCase(),
    "responses",
    String(status),
    "content",
    "application/json",
    "schema",
  );
  if (errs.length) fail(`success shape ${errs}`);
}

function checkDashboard(what: string, status: number, headers: Headers, text: string) {
  const fail = (why: string) =>
    failures.push(`${what} → ${status}: ${why}; body ${text.slice(0, 300).replace(/\s+/g, " ")}`);
  if (status >= 500) return fail("5xx");
  if (LEAKS.test(text)) return fail("leaks internals");
  if (status >= 300 && status < 400)
    return (headers.get("location") ?? "").startsWith("/dashboard")
      ? undefined
      : fail(`redirect to ${headers.get("location")}`);
  const type = headers.get("content-type") ?? "";
  if (
    !/^(text\/html|text\/css|text\/javascript)/.test(type) &&
    !(/\/export\.csv/.test(what) && type === "text/csv; charset=utf-8")
  )
    fail(`content type ${type}`);
}

async function inBatches(n: number, one: (i: number) => Promise<void>) {
  for (let i = 0; i < n; i += CONCURRENCY)
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n - i) }, (_, j) => one(i + j)));
}

// ---- generators ---------------------------------------------------------------------------

function apiRequest(ops: { path: string; method: string; op: any }[]): { path: string; init: RequestInit } {
  const { path: template, method, op } = pick(ops);
  const keyIndex = int(keys.length);
  let path = template
    .replace("{webhook_id}", () => urlValue(chance(0.6) ? [webhookIds[keyIndex]!] : []))
    .replace("{slug}", () => urlValue(SLUGS));
  const query: string[] = [];
  for (const p of (op.parameters ?? []).filter((x: any) => x.in === "query")) {
    if (chance(0.15)) continue;
    const valid =
      p.name === "courier"
        ? SLUGS
        : p.name === "tracking_number"
          ? ["1234567890120", "1234567890121", "1234567890127", "1234567890128"]
          : p.name === "limit"
            ? ["1", "20", "100"]
            : [];
    query.push(`${p.name}=${urlValue(valid)}`);
    if (chance(0.05)) query.push(`${p.name}=${urlValue(valid)}`);
  }
  if (chance(0.1)) query.push(`${urlValue([])}=${urlValue([])}`);
  if (query.length) path += `?${query.join("&")}`;
  const headers: Record<string, string> = {};
  const k = rand();
  if (k < 0.7) headers["x-api-key"] = keys[keyIndex]!;
  else if (k < 0.85) headers["x-api-key"] = chance(0.5) ? `ctk_${"A".repeat(43)}` : headerValue();
  if (chance(0.2)) headers["x-request-id"] = headerValue();
  if (chance(0.1)) headers.cookie = pick(["ct_session=x", "=;;=", `a=${"b".repeat(3000)}`, "ct_session"]);
  const m = chance(0.9) ? method.toUpperCase() : pick(METHODS);
  const init: RequestInit = { method: m, headers };
  if (m !== "GET" && m !== "HEAD" && (op.requestBody || chance(0.3))) {
    init.body = jsonBody() as BodyInit;
    const ct = pick(CONTENT_TYPES);
    if (ct) headers["content-type"] = ct;
  }
  return { path, init };
}

const DASHBOARD_ROUTES: [string, string, string[]][] = [
  ["GET", "/dashboard", ["done"]],
  ["GET", "/dashboard/keys", ["done"]],
  ["POST", "/dashboard/keys", ["name"]],
  ["POST", "/dashboard/keys/{id}/revoke", []],
  ["GET", "/dashboard/billing", ["done"]],
  ["POST", "/dashboard/billing", ["plan"]],
  ["GET", "/dashboard/shipments", ["q", "state", "courier", "reason", "cursor"]],
  ["GET", "/dashboard/shipments/export.csv", ["q", "state", "courier", "reason"]],
  ["POST", "/dashboard/shipments/follow", ["list", "file"]],
  ["GET", "/dashboard/sign-up", []],
  ["GET", "/dashboard/sign-in", ["next", "done", "expired"]],
  ["POST", "/dashboard/sign-up", ["email", "password"]],
  ["POST", "/dashboard/sign-in", ["email", "password", "next"]],
  ["POST", "/dashboard/sign-out", []],
  ["GET", "/dashboard/webhooks", ["done"]],
  ["GET", "/dashboard/webhooks/new", []],
  ["POST", "/dashboard/webhooks", ["url", "events", "mode", "description"]],
  ["GET", "/dashboard/webhooks/rotate-secret", []],
  ["POST", "/dashboard/webhooks/rotate-secret", []],
  ["GET", "/dashboard/webhooks/{id}", ["fired", "done"]],
  ["GET", "/dashboard/webhooks/{id}/edit", []],
  ["POST", "/dashboard/webhooks/{id}", ["url", "events", "mode", "description"]],
  ["GET", "/dashboard/webhooks/{id}/delete", []],
  ["POST", "/dashboard/webhooks/{id}/delete", []],
  ["POST", "/dashboard/webhooks/{id}/test", ["event"]],
  ["POST", "/dashboard/webhooks/{id}/reactivate", []],
  ["GET", "/dashboard/assets/{id}", []],
  ["GET", "/dashboard/nowhere", []],
];
/** Sign-up and sign-in hash or verify a password (argon2id, 64 MiB each): a few of them suffice. */
let passwordForms = 0;

function dashboardRequest(): { path: string; init: RequestInit } {
  let [method, template, fields] = pick(DASHBOARD_ROUTES);
  const passwordRoute = template === "/dashboard/sign-up" || template === "/dashboard/sign-in";
  if (passwordRoute && method === "POST" && ++passwordForms > 24)
    [method, template, fields] = ["GET", "/dashboard/sign-in", ["next"]];
  const path = template.replace("{id}", () => urlValue(chance(0.5) ? [webhookForDashboard, "dashboard.css"] : []));
  const query =
    method === "GET"
      ? fields
          .filter(() => chance(0.5))
          .map((f) => `${f}=${urlValue(["signed-out", "ok", "/dashboard/keys", "//evil.invalid"])}`)
      : [];
  const headers: Record<string, string> = {};
  const signedIn = chance(0.75) && template !== "/dashboard/sign-out";
  const preCsrf = "p".repeat(43);
  headers.cookie = signedIn
    ? session.cookie
    : pick([`ct_csrf=${preCsrf}`, "ct_session=bogus", "=;;=", `ct_session=${"x".repeat(5000)}`, ""]);
  if (!headers.cookie) delete headers.cookie;
  if (chance(0.1)) headers["sec-fetch-site"] = pick(["cross-site", "same-origin"]);
  const init: RequestInit = { method: chance(0.95) ? method : pick(METHODS), headers };
  if (init.method === "POST") {
    const form = new URLSearchParams();
    form.set("_csrf", chance(0.8) ? (signedIn ? session.csrf : preCsrf) : headerValue());
    for (const f of fields) {
      const valid =
        f === "email"
          ? [`fuzz${int(1e6)}@example.com`]
          : f === "password"
            ? ["correct horse battery"]
            : f === "events"
              ? EVENTS
              : f === "mode"
                ? ["test", "live"]
                : f === "plan"
                  ? ["free", "pro", "business"]
                  : f === "url"
                    ? SAFE_URLS
                    : [];
      if (chance(0.1)) continue;
      form.append(f, chance(0.5) && valid.length ? pick(valid) : pick(STRINGS));
    }
    if (chance(0.05)) form.set("pad", "x".repeat(70_000));
    init.body = chance(0.05) ? (jsonBody() as BodyInit) : form.toString();
    headers["content-type"] = chance(0.9) ? "application/x-www-form-urlencoded" : pick(CONTENT_TYPES);
  }
  return { path: query.length ? `${path}?${query.join("&")}` : path, init };
}

// ---- the run ------------------------------------------------------------------------------

test(`fuzz: ${API_REQUESTS} API, ${DASHBOARD_REQUESTS} dashboard and ${BAD_HOST_REQUESTS} bad-Host requests (seed ${SEED}): no 5xx, documented shapes, no leaks, bounded memory`, async () => {
  const ops = Object.entries(v.doc.paths as Record<string, Record<string, any>>).flatMap(([path, o]) =>
    Object.entries(o)
      .filter(([m]) => ["get", "put", "post", "delete", "patch"].includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );
  expect(ops.length).toBeGreaterThanOrEqual(14);
  const statuses = new Map<number, number>();
  const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
  let rssAfterWarmUp = 0;

  await inBatches(API_REQUESTS, async (i) => {
    if (i === 200) {
      Bun.gc(true);
      rssAfterWarmUp = process.memoryUsage.rss();
    }
    const { path, init } = apiRequest(ops);
    const what = `${init.method} ${path.slice(0, 200)} key=${(init.headers as Record<string, string>)["x-api-key"] ? "yes" : "no"} body=${String(init.body ?? "").slice(0, 80)}`;
    const res = await fetch(base + path, init);
    const text = await res.text();
    count(res.status);
    checkApi(what, init.method!, path, res.status, res.headers.get("content-type") ?? "", text);
    if (!res.headers.get("x-request-id")) failures.push(`${what}: no X-Request-Id`);
  });

  await inBatches(DASHBOARD_REQUESTS, async () => {
    const { path, init } = dashboardRequest();
    const res = await fetch(base + path, { ...init, redirect: "manual" });
    const text = await res.text();
    count(res.status);
    checkDashboard(
      `${init.method} ${path.slice(0, 200)} body=${String(init.body ?? "").slice(0, 120)}`,
      res.status,
      res.headers,
      text,
    );
  });

  await inBatches(BAD_HOST_REQUESTS, async () => {
    const host = pick(["a b", "", "[", "x:99999", "\u00fc", "[::1", "a/b", "%", "a?b", "h#"]);
    const target = pick([
      "/v1/track?courier=dhl&tracking_number=1",
      "/v1/webhooks",
      "/dashboard",
      "/dashboard/sign-in",
      "/billing/plans",
      "/docs",
      "/nowhere",
    ]);
    const res = await rawRequest(
      port,
      Buffer.from(
        `${pick(["GET", "POST"])} ${target} HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${keys[0]}\r\nContent-Length: 2\r\n\r\n{}`,
        "utf8",
      ),
    );
    count(res.status);
    if (
      res.status !== 400 ||
      !res.headers["x-request-id"] ||
      JSON.parse(res.body || "{}").error?.code !== "BAD_REQUEST"
    )
      failures.push(`Host ${JSON.stringify(host)} ${target} → ${res.status} ${res.body.slice(0, 200)}`);
  });

  Bun.gc(true);
  const growth = process.memoryUsage.rss() - rssAfterWarmUp;
  expect(failures.slice(0, 40)).toEqual([]);
  expect(failures.length).toBe(0);
  // Every family of answer was reached: the run is not all 401s or all 422s.
  for (const s of [200, 201, 401, 404, 413, 422, 429, 400]) expect([s, statuses.get(s) ?? 0]).not.toEqual([s, 0]);
  // Generous: one unbounded parse of a hostile body used to take gigabytes.
  expect(growth).toBeLessThan(256 * 2 ** 20);
}, 90_000);
