/**
 * A seeded generator of hostile HTTP requests, as an outside fuzzer sends them, and the check of each answer
 * against the served OpenAPI document. Used by `bun run bench:hostile fuzz` (bench/hostile.ts) for its
 * 100,000-request run. Requests mix every operation of the document, unknown paths, the dashboard and the
 * public pages; every method; random, repeated and broken query strings and percent-encodings; random headers
 * (keys valid, malformed or missing, `Idempotency-Key`, `X-Request-Id`, content types, cookies); bodies that
 * are valid, wrong, deep, large, not UTF-8 or not JSON.
 *
 * NETWORK SAFETY: webhook URLs come from a fixed list (`.invalid` names; private, loopback and link-local
 * addresses, which the address guard refuses); the service under test answers no DNS (hostile-probe.ts).
 */
import { ERROR_CODES } from "../../src/lib/errors.ts";
import type { DocValidator } from "../client/openapi.ts";

/** mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Webhook URLs a fuzzer may register. The private and link-local ones only reach the address classifier, which
 * refuses them (the fuzz contexts allow no private range and resolve no name): nothing is ever sent to them.
 */
export const SAFE_URLS = [
  "https://hooks.fuzz.invalid/h",
  "https://hooks.fuzz.invalid:0/",
  "http://hooks.fuzz.invalid/",
  "https://user:pw@hooks.fuzz.invalid/",
  "https://127.0.0.1/x",
  "https://10.1.2.3/",
  "https://[::1]/",
  "https://169.254.169.254/latest",
  "ftp://hooks.fuzz.invalid/",
  "javascript:alert(1)",
  `https://${"a".repeat(3000)}.invalid/`,
  "https://hooks.fuzz.invalid/\u0000",
  "not a url",
  " https://hooks.fuzz.invalid/s ",
  "HTTPS://HOOKS.FUZZ.INVALID/UP",
  "https://hooks.fuzz.invalid/#frag",
  "https://xn--bcher-kva.fuzz.invalid/",
  "https://bücher.fuzz.invalid/",
];
export const STRINGS = [
  "",
  " ",
  "a",
  "\u0000",
  "a\u0000b",
  "\u0001\u001f\u007f",
  "\ud800",
  "\udfff\ud800",
  "ü",
  "📦",
  "📦".repeat(33),
  "📦".repeat(65),
  "١٢٣٤",
  "\u202e",
  "\r\n",
  "\t",
  "x".repeat(5000),
  "9".repeat(70),
  "' or 1=1 --",
  "'; drop table accounts; --",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "${jndi:ldap://x.invalid/a}",
  "%00",
  "%",
  "%zz",
  "%FF",
  "null",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "1e999",
  "-1",
  "0",
  "2.5",
  "1e1",
  "0x10",
  "101",
  "100",
  "1",
  "-0",
  "99999999999999999999999",
  "NaN",
  "Infinity",
  "2026-11-05",
  "2026-11-05T10:00:00Z",
  "2026-02-30T10:00:00Z",
  "2026-11-05T23:59:60Z",
  "1970-01-01T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "+275760-09-13T00:00:00Z",
  "1234567890120",
  "1234567890121",
  "1234567890127",
  "JD014600006281470000",
  "1Z999AA10123456784",
  "dhl",
  "delhivery",
  "bluedart",
  "auto",
  "indiapost",
  "wh_" + "0".repeat(32),
  "dlv_" + "0".repeat(32),
  "tracking.delivered",
  "test",
  "live",
  "active",
  "business",
  "pending",
  "in_transit",
  ...SAFE_URLS,
];
export const EVENTS = [
  "tracking.updated",
  "tracking.in_transit",
  "tracking.out_for_delivery",
  "tracking.delivered",
  "tracking.exception",
];
export const RAW_ESCAPES = [
  "%FF",
  "%E0%A4",
  "%00",
  "%zz",
  "%",
  "%ED%A0%80",
  "%C0%AF",
  "%2e%2e%2f",
  "%2F",
  "%25",
  "%0A",
  "%20",
];
export const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];
export const CONTENT_TYPES = [
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=latin1",
  "application/xml",
  "",
];
export const SLUGS = ["delhivery", "dhl", "bluedart", "ups", "fedex", "indiapost", "auto"];
const EXTRA_PATHS = [
  "/",
  "/v1",
  "/v1/",
  "/v1/nowhere",
  "/v2/track",
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
  "/docs/init.js",
  "/docs/assets/swagger-ui.css",
  "/docs/assets/..%2f..%2fpackage.json",
  "/postman",
  "/billing/plans",
  "/billing/stripe/webhook",
  "/dashboard",
  "/dashboard/sign-in",
  "/dashboard/nowhere",
  "/v1/webhooks/rotate-secret",
  "/v1/couriers/detect",
  "//v1/track",
  "/v1//webhooks",
  "/v1/track/",
  "/V1/TRACK",
  "/v1/webhooks/%2e%2e",
];

export interface Fixtures {
  /** Valid API keys (several accounts, so the per-minute limits leave room). */
  keys: string[];
  webhookIds: string[];
}

export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** The generator: `next()` returns one request; the same seed gives the same sequence. */
export function hostileRequests(doc: Record<string, any>, fixtures: Fixtures, seed: number) {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const chance = (p: number) => rand() < p;
  const pick = <T>(a: readonly T[]): T => a[int(a.length)]!;
  const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, o]) =>
    Object.entries(o)
      .filter(([m]) => ["get", "put", "post", "delete", "patch"].includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

  function hostileJson(depth = 0): unknown {
    switch (int(depth > 6 ? 4 : 9)) {
      case 0:
        return pick(STRINGS);
      case 1:
        return pick([0, -1, 1.5, 1e308, 2 ** 53 + 1, -0, 123456789, 101]);
      case 2:
        return chance(0.5);
      case 3:
        return null;
      case 4:
        return Array.from({ length: int(5) }, () => hostileJson(depth + 1));
      case 5:
        return Object.fromEntries(
          Array.from({ length: int(5) }, () => [
            pick([
              ...STRINGS.slice(0, 30),
              "url",
              "events",
              "mode",
              "description",
              "event",
              "status",
              "since",
              "shipments",
            ]),
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
        return plausibleBody();
    }
  }

  function plausibleBody(): Record<string, unknown> {
    switch (int(4)) {
      case 0:
        return {
          shipments: Array.from({ length: 1 + int(3) }, () => ({
            courier: pick(SLUGS),
            tracking_number: pick(STRINGS),
          })),
        };
      case 1:
        return { since: pick(STRINGS) };
      case 2:
        return { event: chance(0.7) ? pick(EVENTS) : pick(STRINGS) };
      default:
        return {
          url: pick(SAFE_URLS),
          events: EVENTS.filter(() => chance(0.5)),
          mode: pick(["test", "live"]),
          ...(chance(0.5) ? { description: chance(0.8) ? pick(STRINGS) : null } : {}),
        };
    }
  }

  function jsonBody(): string | Uint8Array {
    switch (int(12)) {
      case 0:
        return "[".repeat(1 + int(40_000)) + "]".repeat(int(3));
      case 1:
        return pick(["{", "[1,]", '{"a":}', "\u0000", "nul", '"\\ud800"', "{}".repeat(100), "null", "7", '"x"']);
      case 2:
        return new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
      case 3:
        return JSON.stringify({ ...plausibleBody(), pad: "x".repeat(70_000) });
      case 4:
        return "";
      case 5:
        return '{"__proto__":{"polluted":1},"url":"https://hooks.fuzz.invalid/","events":["tracking.delivered"],"mode":"test"}';
      case 6:
      case 7: {
        const body = plausibleBody();
        body[pick(["url", "events", "mode", "description", "status", "event", "extra", "since", "shipments"])] =
          hostileJson();
        return JSON.stringify(body);
      }
      default:
        return JSON.stringify(chance(0.6) ? plausibleBody() : hostileJson());
    }
  }

  function urlValue(valid: string[]): string {
    if (chance(0.4) && valid.length) return encodeURIComponent(pick(valid));
    if (chance(0.2)) return pick(RAW_ESCAPES) + pick(["", "a", "1"]);
    const s = pick(STRINGS);
    try {
      return encodeURIComponent(s);
    } catch {
      return "%ED%A0%80"; // a lone surrogate has no UTF-8 form; its CESU-8 bytes instead
    }
  }

  /** A header value `fetch` accepts (Latin-1, no control characters). */
  const headerValue = () => pick(STRINGS.filter((s) => /^[\x20-\x7e\xa0-\xff]{0,300}$/.test(s)));

  function headersFor(authed: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    const k = rand();
    if (authed && k < 0.7) headers["x-api-key"] = pick(fixtures.keys);
    else if (k < 0.85) headers["x-api-key"] = chance(0.5) ? `ctk_${"A".repeat(43)}` : headerValue();
    if (chance(0.15)) headers["x-request-id"] = chance(0.5) ? headerValue() : `fuzz-${int(1e9)}`;
    if (chance(0.1)) headers["idempotency-key"] = chance(0.5) ? `k${int(50)}` : headerValue();
    if (chance(0.1))
      headers.cookie = pick([
        "ct_session=x",
        "=;;=",
        `a=${"b".repeat(3000)}`,
        "ct_session",
        "ct_csrf=" + "p".repeat(43),
      ]);
    if (chance(0.05)) headers["x-forwarded-for"] = pick(["1.2.3.4", "::1", "garbage", "1.2.3.4, 5.6.7.8", ""]);
    if (chance(0.05)) headers.accept = pick(["text/html", "*/*", "application/xml", "\u00ff"]);
    return headers;
  }

  function apiRequest(): HostileRequest {
    const { path: template, method, op } = pick(ops);
    let path = template
      .replace("{webhook_id}", () => urlValue(chance(0.6) ? fixtures.webhookIds : []))
      .replace("{delivery_id}", () => urlValue([]))
      .replace("{slug}", () => urlValue(SLUGS))
      .replace("{courier}", () => urlValue(SLUGS))
      .replace("{tracking_number}", () => urlValue(["1234567890121", "1Z999AA10123456784"]));
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
    if (chance(0.03)) query.push("a".repeat(int(8000)));
    if (query.length) path += `?${query.join("&")}`;
    const headers = headersFor(true);
    const m = chance(0.9) ? method.toUpperCase() : pick(METHODS);
    const req: HostileRequest = { method: m, path, headers };
    if (m !== "GET" && m !== "HEAD" && (op.requestBody || chance(0.3))) {
      req.body = jsonBody();
      const ct = pick(CONTENT_TYPES);
      if (ct) headers["content-type"] = ct;
    }
    return req;
  }

  function otherRequest(): HostileRequest {
    let path = pick(EXTRA_PATHS);
    if (chance(0.3)) path += `?${urlValue([])}=${urlValue([])}`;
    const method = chance(0.7) ? "GET" : pick(METHODS);
    const req: HostileRequest = { method, path, headers: headersFor(path.startsWith("/v1")) };
    // No sign-in or sign-up forms: each hashes a password with argon2id (64 MiB), a cost measured elsewhere.
    if (method !== "GET" && method !== "HEAD" && !path.startsWith("/dashboard")) {
      req.body = jsonBody();
      req.headers["content-type"] = pick(CONTENT_TYPES) || "application/json";
    }
    return req;
  }

  return { next: (): HostileRequest => (chance(0.85) ? apiRequest() : otherRequest()) };
}

/** Text that shows an internal detail leaked into an answer (SQL, driver errors, source paths, stack frames). */
export const LEAKS =
  /Failed query|PostgresError|DrizzleQueryError|invalid byte sequence|from "\w+"|insert into "\w+"|node_modules|\/src\/|\.ts:\d+|at \S+ \(\S+:\d+:\d+\)|RangeError|TypeError/;
export const isErrorCode = (c: unknown) => (ERROR_CODES as readonly unknown[]).includes(c);

/**
 * The problem with one answer, or undefined: a 5xx; internals leaked; not JSON where JSON is due; an error body
 * outside the documented shapes (the envelope with a documented code, the 422 body); a success outside its
 * operation's documented schema. Dashboard and documentation pages: HTML, CSS, JavaScript or a same-site redirect.
 */
export function answerProblem(
  v: DocValidator,
  req: HostileRequest,
  status: number,
  headers: Headers,
  text: string,
): string | undefined {
  if (status >= 500) return "5xx";
  if (LEAKS.test(text)) return "leaks internals";
  const path = req.path.split("?")[0]!;
  if (!headers.get("x-request-id")) return "no X-Request-Id";
  const type = headers.get("content-type") ?? "";
  if (req.method === "HEAD" || status === 204 || status === 304) return text === "" ? undefined : "body on HEAD/204";
  if (status >= 300 && status < 400)
    return (headers.get("location") ?? "").startsWith("/") ? undefined : `redirect to ${headers.get("location")}`;
  if (
    /^(text\/html|text\/css|text\/javascript|text\/plain|image\/|application\/javascript)/.test(type) &&
    !path.startsWith("/v1")
  )
    return undefined;
  if (!type.startsWith("application/json")) return `content type ${type}`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (status === 422) {
    const errs = v.errors(body, "components", "schemas", "ValidationError");
    return errs.length ? `422 shape ${errs}` : undefined;
  }
  if (status >= 400) {
    const errs = v.errors(body, "components", "schemas", "Error");
    return errs.length || !isErrorCode(body.error?.code) ? `error envelope ${errs}` : undefined;
  }
  const found = v.operation(req.method, decodeURIComponentSafe(path).replace(/(.)\/$/, "$1"));
  if (!found) return undefined; // a public JSON page outside the document (/healthz, /openapi.json, /postman …)
  const documented = found.op.responses[String(status)];
  if (!documented) return `undocumented status for ${found.template}`;
  const errs = v.errors(
    body,
    "paths",
    found.template,
    req.method.toLowerCase(),
    "responses",
    String(status),
    "content",
    "application/json",
    "schema",
  );
  return errs.length ? `success shape ${errs.slice(0, 2)}` : undefined;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
