/**
 * Hostile input costs nothing and breaks nothing (README "Hostile input",
 * docs/hostile-input.md): the key is checked before anything is read, bodies
 * and JSON nesting are bounded, and every answer — malformed Host, NUL bytes,
 * oversize or endless bodies — is in a documented shape with a request id.
 *
 * Real server on loopback, listening with the options main.ts uses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonDepthExceeds } from "../../src/http/body.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { rawRequest } from "../helpers/raw-http.ts";

let ctx: TestContext;
let base: string;
let port: number;
let key: string;

beforeAll(async () => {
  ctx = await testContext();
  // As main.ts listens: Bun refuses bodies over 1 MiB itself; never the development error page.
  ctx.app.listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024 * 1024, development: false });
  port = ctx.app.server!.port!;
  base = `http://127.0.0.1:${port}`;
  key = (await ctx.account("growth")).key;
});
afterAll(async () => {
  await ctx.app.stop(true);
  await ctx.close();
});

/** `[response, parsed JSON or text]` over the real socket. */
async function call(path: string, init: RequestInit & { key?: string } = {}): Promise<[Response, any]> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("x-api-key", init.key);
  const res = await fetch(base + path, { ...init, headers });
  const text = await res.text();
  try {
    return [res, JSON.parse(text)];
  } catch {
    return [res, text];
  }
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const HOSTILE_BODY = nested(32_000); // 64,000 bytes
const envelope = (code: string) => ({ success: false, error: { code, message: expect.any(String) } });

function expectRequestId(res: { headers: Headers | Record<string, string> }) {
  const h = res.headers instanceof Headers ? res.headers.get("x-request-id") : res.headers["x-request-id"];
  expect(h).toMatch(/^req_[0-9a-f]{32}$/);
}

describe("order of work: the API key before anything else (spec: Authentication 3)", () => {
  test("the 64,000-byte body of 32,000 nested arrays without a key: 401, and the service's memory does not grow", async () => {
    Bun.gc(true);
    const before = process.memoryUsage.rss();
    for (let i = 0; i < 3; i++) {
      const [res, body] = await call("/v1/webhooks", {
        method: "POST",
        body: HOSTILE_BODY,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(401);
      expect(body).toEqual(envelope("INVALID_API_KEY"));
      expectRequestId(res);
    }
    // Generous: parsing and validating this body once took gigabytes.
    expect(process.memoryUsage.rss() - before).toBeLessThan(64 * 2 ** 20);
  }, 30_000);

  test("an unauthenticated request is answered without its body being read", async () => {
    // Headers announce 60,000 bytes; none is ever sent. A server that read the body first would wait forever.
    const res = await rawRequest(
      port,
      `POST /v1/webhooks HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`,
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual(envelope("INVALID_API_KEY"));
  });

  test("the same body with a valid key: 422 json_invalid (nesting over 32), memory flat", async () => {
    Bun.gc(true);
    const before = process.memoryUsage.rss();
    for (let i = 0; i < 3; i++) {
      const [res, body] = await call("/v1/webhooks", {
        method: "POST",
        key,
        body: HOSTILE_BODY,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(422);
      expect(body).toEqual({
        detail: [{ loc: ["body"], msg: "JSON nested deeper than 32 levels", type: "json_invalid" }],
      });
      expect(res.headers.get("ratelimit-limit")).toBe("600");
    }
    expect(process.memoryUsage.rss() - before).toBeLessThan(64 * 2 ** 20);
  }, 30_000);

  test("401, not 422, whatever is wrong with query, path or body", async () => {
    const cases: [string, RequestInit][] = [
      ["/v1/track?courier=delhivery", {}],
      ["/v1/track", {}],
      ["/v1/webhooks/%00/deliveries?limit=abc&cursor=%FF", {}],
      ["/v1/webhooks/x", { method: "PUT", body: '{"url":5,"events":"x"}' }],
      ["/v1/webhooks", { method: "POST", body: "{not json" }],
      ["/v1/couriers/detect", {}],
    ];
    for (const [path, init] of cases)
      for (const headers of [{}, { "x-api-key": "ctk_garbage" }, { "x-api-key": "x".repeat(5000) }] as Record<
        string,
        string
      >[]) {
        const [res, body] = await call(path, { ...init, headers });
        expect([path, res.status]).toEqual([path, 401]);
        expect(body).toEqual(envelope("INVALID_API_KEY"));
      }
  });

  test("RateLimit-* headers on a 422; an account over its limit gets 429, not 422", async () => {
    const free = await ctx.account("free"); // 10 requests per minute
    const [r422, b422] = await call("/v1/track?courier=delhivery", { key: free.key });
    expect(r422.status).toBe(422);
    expect(b422.detail[0].loc).toEqual(["query", "tracking_number"]);
    expect(r422.headers.get("ratelimit-limit")).toBe("10");
    expect(r422.headers.get("ratelimit-remaining")).toBe("9");
    expect(Number(r422.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    for (let i = 0; i < 9; i++) await call("/v1/couriers", { key: free.key });
    for (const [path, init] of [
      ["/v1/track?courier=delhivery", {}],
      ["/v1/webhooks", { method: "POST", body: '{"url":5}' }],
      ["/v1/webhooks", { method: "POST", body: HOSTILE_BODY }],
    ] as [string, RequestInit][]) {
      const [res, body] = await call(path, { ...init, key: free.key });
      expect(res.status).toBe(429);
      expect(body).toEqual(envelope("RATE_LIMITED"));
      expect(res.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  test("the demo counts its per-IP limit before validating the query: over the limit, 429 whatever is sent", async () => {
    const ip = { "x-forwarded-for": "198.51.100.77" }; // ignored without TRUST_PROXY: every test request is 127.0.0.1
    for (let i = 0; i < 5; i++) await call("/demo/track?courier=delhivery", { headers: ip });
    const [res, body] = await call("/demo/track?courier=delhivery", { headers: ip });
    expect(res.status).toBe(429);
    expect(body).toEqual(envelope("DEMO_RATE_LIMITED"));
  });
});

describe("bounded parsing", () => {
  test("a chunked body (no Content-Length) is cut at 64 KiB: our 413 envelope, before the body even ends", async () => {
    // 80 KiB of chunks and no terminating chunk: only a reader that stops at the limit can answer.
    const chunks = Array.from({ length: 5 }, () => `4000\r\n${" ".repeat(0x4000)}\r\n`).join("");
    const res = await rawRequest(
      port,
      `POST /v1/webhooks HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(envelope("PAYLOAD_TOO_LARGE"));
    expectRequestId(res);
    // Under 64 KiB the same chunked body is read and judged as JSON.
    const small = await rawRequest(
      port,
      `POST /v1/webhooks HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[[[[[\r\n0\r\n\r\n`,
    );
    expect(small.status).toBe(422);
    expect(JSON.parse(small.body).detail[0].type).toBe("json_invalid");
  });

  test("a Content-Length over 64 KiB is refused from the header, before any byte of the body", async () => {
    const res = await rawRequest(
      port,
      `POST /v1/webhooks HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Length: 70000\r\n\r\n`,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(envelope("PAYLOAD_TOO_LARGE"));
    expectRequestId(res);
  });

  test("nesting: 32 levels reach validation, 33 are json_invalid; brackets inside strings do not count", async () => {
    const [r32, b32] = await call("/v1/webhooks", { method: "POST", key, body: nested(32) });
    expect(r32.status).toBe(422);
    expect(b32.detail[0].type).not.toBe("json_invalid");
    const [r33, b33] = await call("/v1/webhooks", { method: "POST", key, body: nested(33) });
    expect(r33.status).toBe(422);
    expect(b33.detail).toEqual([{ loc: ["body"], msg: "JSON nested deeper than 32 levels", type: "json_invalid" }]);
    const inString = JSON.stringify({
      url: "https://example.com/h",
      events: ["tracking.delivered"],
      mode: "test",
      description: '\\"' + "[{".repeat(200),
    });
    const [rs, bs] = await call("/v1/webhooks", { method: "POST", key, body: inString });
    expect([rs.status, bs.data?.description]).toEqual([201, '\\"' + "[{".repeat(200)]);
  });

  test("the depth scan: strings, escapes and multi-byte text", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(jsonDepthExceeds(enc(nested(3)), 3)).toBe(false);
    expect(jsonDepthExceeds(enc(nested(4)), 3)).toBe(true);
    expect(jsonDepthExceeds(enc('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(jsonDepthExceeds(enc('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(enc('["[[[[", "\\"[[[[", "ü[[[["]'), 1)).toBe(false);
    expect(jsonDepthExceeds(enc('["\\\\", [[1]]]'), 2)).toBe(true); // an escaped backslash ends before the quote
    expect(jsonDepthExceeds(enc("[]".repeat(10_000)), 1)).toBe(false);
  });

  test("bytes that are not UTF-8 are json_invalid, never replaced", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"url":"https://example.com/'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('","events":["tracking.delivered"],"mode":"test"}'),
    ]);
    const [res, body] = await call("/v1/webhooks", { method: "POST", key, body: bytes });
    expect(res.status).toBe(422);
    expect(body.detail).toEqual([{ loc: ["body"], msg: "Invalid JSON: the body is not UTF-8", type: "json_invalid" }]);
  });

  test("bodies are checked against the documented schema as sent: one item per problem, undeclared fields refused", async () => {
    const [res, body] = await call("/v1/webhooks", {
      method: "POST",
      key,
      body: '{"url":"https://example.com/h","events":"tracking.delivered","mode":"test","description":5,"extra":1}',
    });
    expect(res.status).toBe(422);
    expect(body.detail).toEqual([
      { loc: ["body", "extra"], msg: expect.any(String), type: "extra_forbidden" },
      { loc: ["body", "events"], msg: "Input should be a valid list", type: "list_type" },
      { loc: ["body", "description"], msg: "Input should be a valid string", type: "string_type" },
    ]);
  });

  test("a validation error never serialises the received value", async () => {
    const marker = `MARKER${"x".repeat(20_000)}`;
    const serialised: number[] = [];
    const original = JSON.stringify;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      const out = original(...args);
      if (typeof out === "string" && out.includes("MARKERxxxx")) serialised.push(out.length);
      return out;
    }) as typeof JSON.stringify;
    let res: Response, body: any;
    try {
      const payload = `{"url":"https://example.com/h","events":["tracking.delivered",${original(marker)}],"mode":"test"}`;
      [res, body] = await call("/v1/webhooks", { method: "POST", key, body: payload });
    } finally {
      JSON.stringify = original;
    }
    expect(res.status).toBe(422);
    expect(body.detail).toEqual([{ loc: ["body", "events", 1], msg: expect.any(String), type: "enum" }]);
    expect(serialised).toEqual([]);
  });
});

describe("every answer in a documented shape", () => {
  test("a malformed Host header → 400 BAD_REQUEST envelope with X-Request-Id, on API, public and dashboard paths", async () => {
    for (const host of ["a b", "", "[", "x:99999", "\u00fc", "[::1", "a/b"])
      for (const path of ["/v1/track?courier=dhl&tracking_number=1", "/billing/plans", "/dashboard", "/nowhere"]) {
        const head = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${key}\r\n\r\n`, "utf8");
        const res = await rawRequest(port, head);
        expect([host, path, res.status]).toEqual([host, path, 400]);
        expect(res.headers["content-type"]).toStartWith("application/json");
        expect(JSON.parse(res.body)).toEqual(envelope("BAD_REQUEST"));
        expectRequestId(res);
        expect(res.body).not.toMatch(/src\/|node_modules|at \w+ \(/);
      }
  });

  test("NUL bytes and invalid UTF-8 in API input → 422 string_pattern_mismatch, never a database error", async () => {
    const [, created] = await call("/v1/webhooks", {
      method: "POST",
      key,
      body: '{"url":"https://example.com/nul","events":["tracking.delivered"],"mode":"test"}',
    });
    const id = created.data.id as string;
    const cases: [string, RequestInit, (string | number)[]][] = [
      [
        "/v1/webhooks",
        {
          method: "POST",
          body: '{"url":"https://example.com/h","events":["tracking.delivered"],"mode":"test","description":"a\\u0000b"}',
        },
        ["body", "description"],
      ],
      [`/v1/webhooks/${id}`, { method: "PUT", body: '{"description":"\\u0000"}' }, ["body", "description"]],
      [`/v1/webhooks/${id}/deliveries?cursor=dlv_%00`, {}, ["query", "cursor"]],
      [`/v1/webhooks/${id}/deliveries?cursor=%FF%FE`, {}, ["query", "cursor"]],
      ["/v1/webhooks/wh_%00", {}, ["path", "webhook_id"]],
      ["/v1/webhooks/wh_%00/test", { method: "POST" }, ["path", "webhook_id"]],
      ["/v1/track?courier=delhivery&tracking_number=12345%0067890", {}, ["query", "tracking_number"]],
      ["/v1/track?courier=delhivery&tracking_number=%E0%A4", {}, ["query", "tracking_number"]],
    ];
    for (const [path, init, loc] of cases) {
      const [res, body] = await call(path, { ...init, key });
      expect([path, res.status]).toEqual([path, 422]);
      expect(body.detail).toContainEqual({
        loc,
        msg: expect.stringMatching(/^String should match pattern/),
        type: "string_pattern_mismatch",
      });
    }
    const [, still] = await call(`/v1/webhooks/${id}`, { key });
    expect(still.data.description).toBeNull();
  });

  test("a path id whose percent-encoding is not UTF-8: 422 string_unicode on the API, the 404 page on the dashboard (never a 500)", async () => {
    for (const bad of ["%zz", "%FF1", "%ED%A0%80", "%C0%AF"]) {
      const [api, apiBody] = await call(`/v1/webhooks/${bad}`, { key });
      expect([bad, api.status]).toEqual([bad, 422]);
      expect(apiBody.detail[0].loc).toEqual(["path", "webhook_id"]);
      expect(apiBody.detail[0].type).toBe("string_unicode");
      const [del] = await call(`/v1/webhooks/wh_${bad}`, { method: "DELETE", key });
      expect([bad, del.status]).toEqual([bad, 422]);
      const page = await fetch(`${base}/dashboard/webhooks/${bad}/edit`, {
        headers: { cookie: "ct_session=x" },
        redirect: "manual",
      });
      expect([bad, page.status]).toEqual([bad, 404]);
      expect(page.headers.get("content-type")).toStartWith("text/html");
    }
  });

  test("an oversize dashboard form gets the dashboard's HTML page, not the API's JSON", async () => {
    const res = await fetch(`${base}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `email=${"a".repeat(70_000)}`,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expectRequestId(res);
  });

  test("an unknown /v1 path: 401 without a key (every /v1 request needs one), 404 with one", async () => {
    const [anon, anonBody] = await call("/v1/nowhere");
    expect([anon.status, anonBody]).toEqual([401, envelope("INVALID_API_KEY")]);
    const [known, knownBody] = await call("/v1/nowhere", { key });
    expect([known.status, knownBody]).toEqual([404, envelope("NOT_FOUND")]);
  });

  test("a well-formed client X-Request-Id is kept and echoed; anything else is replaced by ours", async () => {
    const [ok] = await call("/v1/couriers", { key, headers: { "x-request-id": "trace-01J:abc.DEF_9" } });
    expect(ok.headers.get("x-request-id")).toBe("trace-01J:abc.DEF_9");
    const [err] = await call("/v1/nowhere", { key, headers: { "x-request-id": "a".repeat(128) } });
    expect(err.headers.get("x-request-id")).toBe("a".repeat(128));
    for (const bad of ["a".repeat(129), "has space", "semi;colon", "ü", "<script>"]) {
      const [res] = await call("/billing/plans", { headers: { "x-request-id": bad } });
      expectRequestId(res);
    }
  });

  test("security headers on successes, errors and early refusals", async () => {
    const responses = [
      (await call("/billing/plans"))[0],
      (await call("/v1/couriers", { key }))[0],
      (await call("/v1/couriers"))[0],
      (await call("/v1/track?courier=x", { key }))[0],
      (await call("/nowhere"))[0],
    ];
    for (const res of responses) {
      expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const early = await rawRequest(port, "GET /billing/plans HTTP/1.1\r\nHost: a b\r\n\r\n");
    expect(early.headers["x-content-type-options"]).toBe("nosniff");
  });

  test("what Bun answers itself, before any of our code runs (the README's list)", async () => {
    const cases: [string, string, number][] = [
      ["no Host on HTTP/1.1", "GET /billing/plans HTTP/1.1\r\n\r\n", 400],
      ["Content-Length not a number", "POST /v1/webhooks HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n", 400],
      [
        "two Content-Length headers",
        "POST /v1/webhooks HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        400,
      ],
      [
        "chunked and Content-Length",
        "POST /v1/webhooks HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        400,
      ],
      [
        "a Transfer-Encoding other than chunked",
        "POST /v1/webhooks HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nabc",
        400,
      ],
      ["control byte in a header", "GET /billing/plans HTTP/1.1\r\nHost: a\r\nX-A: a\x01b\r\n\r\n", 400],
      ["malformed request line", "HELLO\r\n\r\n", 400],
      ["request target not starting with /", "GET billing HTTP/1.1\r\nHost: a\r\n\r\n", 400],
      ["space in the path", "GET /billing plans HTTP/1.1\r\nHost: a\r\n\r\n", 505],
      ["unknown HTTP version", "GET /billing/plans HTTP/9.9\r\nHost: a\r\n\r\n", 505],
      ["header section too large", `GET /billing/plans HTTP/1.1\r\nHost: a\r\nX-A: ${"a".repeat(20_000)}\r\n\r\n`, 431],
      [
        "body over 1 MiB by Content-Length",
        "POST /v1/webhooks HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n",
        413,
      ],
    ];
    for (const [name, request, status] of cases) {
      const res = await rawRequest(port, request);
      expect([name, res.status]).toEqual([name, status]);
      expect(res.body).toBe("");
    }
  });
});

describe("production is the only mode", () => {
  test("the same hostile requests get byte-identical answers with and without NODE_ENV=production", async () => {
    const probe = new URL("../helpers/hostile-probe.ts", import.meta.url).pathname;
    const run = async (env: Record<string, string | undefined>) => {
      const child = Bun.spawn([process.execPath, probe], { env, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      expect([code, err]).toEqual([0, ""]);
      return out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as [string, number, string, string]);
    };
    const { NODE_ENV: _, ...rest } = process.env;
    const [development, production] = await Promise.all([run(rest), run({ ...rest, NODE_ENV: "production" })]);
    expect(development).toEqual(production);
    expect(development.map(([, status]) => status)).toEqual([
      401, 422, 422, 422, 422, 422, 422, 422, 422, 404, 404, 400,
    ]);
    for (const [, , type, body] of development) {
      expect(type).toStartWith("application/json");
      expect(body).not.toMatch(/found|expected|src\/|node_modules/);
    }
  }, 60_000);
});
