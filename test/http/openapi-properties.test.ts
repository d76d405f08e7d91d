/**
 * Property-based testing of the whole OpenAPI document (fast-check): for every operation of the served
 * `/openapi.json`, requests generated from the operation's own schemas (test/helpers/openapi-arbitraries.ts) —
 * every value valid, or exactly one invalid; with a valid key, a bad key or none — go to the real app on a real
 * test database. Each answer must be:
 *
 * - never 5xx;
 * - a status the operation documents, in its documented content type, with `X-Request-Id`, the documented
 *   `RateLimit-*` headers on an authenticated success, and a body that matches the documented schema (Ajv);
 * - 401 without a valid key on an authenticated operation;
 * - with a valid key: 422 naming the invalid value's location when one value is invalid, and never 422 when
 *   all are valid — except for the rules the document states in prose beside the schema (a webhook URL's host
 *   is public, reserved or repeated header names, "at most 30 days ago"), listed in EXTRA_RULES by location and
 *   wording, so a rule the schema could state but does not (a pattern looser than the service) fails the run.
 *
 * Deterministic: the seed is fixed (override with PBT_SEED=<n>) and printed in the test name; fast-check prints
 * the seed, the path and the shrunk counterexample of a failure, so `PBT_SEED=<seed>` reproduces it. The run is
 * bounded by count (RUNS per operation, PBT_RUNS to change it), not by time.
 *
 * NETWORK SAFETY: requests go through `app.handle` (no socket); the app's resolver answers nothing, so a test
 * fire to a generated host name never leaves the machine, and a generated webhook URL whose host is an IP
 * address (which is connected to without resolving) is rewritten to a `.invalid` name before it is sent
 * ({@link confine}); couriers answer from the loopback simulator.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { isIpLiteral, type Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { docValidator, type DocValidator } from "../client/openapi.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import {
  operationsOf,
  requestsFor,
  type GeneratedRequest,
  type Known,
  type OperationEntry,
} from "../helpers/openapi-arbitraries.ts";

const SEED = Number(process.env.PBT_SEED ?? 0x0a11_2026);
const RUNS = Number(process.env.PBT_RUNS ?? 60);

/** 422 items a valid request may still get: rules the document states in prose, by location (a prefix when it ends in `.`) and wording. */
const WEBHOOK_PROSE: [string, RegExp][] = [
  ["body.url", /public IP address/],
  ["body.headers.", /reserved|given twice/],
];
const EXTRA_RULES: Record<string, [string, RegExp][]> = {
  createWebhook: WEBHOOK_PROSE,
  updateWebhook: WEBHOOK_PROSE,
  recoverWebhookDeliveries: [["body.since", /30 days/]],
  listEvents: [["query.since", /30 days/]],
  updateBranding: [
    ["body.accent_color", /contrast/],
    ["body.logo_png_base64", /PNG/],
  ],
  getEstimates: [["query.ship_date", /calendar day from/]],
};

/** A body whose `url` would name an IP address gets a `.invalid` host instead (the rest of the URL is kept). */
function confine(body: unknown): unknown {
  const url = (body as { url?: unknown } | null)?.url;
  if (typeof url !== "string" || !URL.canParse(url.trim())) return body;
  const host = new URL(url.trim()).hostname;
  if (!isIpLiteral(host)) return body;
  return { ...(body as object), url: url.replace(/^(\s*[^:]*:\/\/)[^/?#]*/, "$1ip.pbt.invalid") };
}

let ctx: TestContext;
let v: DocValidator;
let key: string;
const known: Known = {};
const noResolution: Resolver = async (host) => {
  throw Object.assign(new Error(`no DNS in this test for ${host}`), { code: "ENOTFOUND" });
};

beforeAll(async () => {
  // What is tested is the answers' shapes: a database wait on a loaded CI machine must not turn into the 503 of the
  // request deadline (tested on its own in test/http/request-deadline.test.ts).
  ctx = await testContext({ DB_DEADLINE_SECONDS: "30" }, { resolver: noResolution } as never);
  v = docValidator((await ctx.call("/openapi.json"))[1]);
  key = (await ctx.account("business")).key;
  const [, hook] = await ctx.call("/v1/webhooks", {
    method: "POST",
    key,
    body: JSON.stringify({ url: "https://hooks.pbt.invalid/a", events: ["tracking.delivered"], mode: "test" }),
  });
  await ctx.call(`/v1/webhooks/${hook.data.id}/test`, { method: "POST", key });
  const [, deliveries] = await ctx.call(`/v1/webhooks/${hook.data.id}/deliveries`, { key });
  await ctx.call("/v1/shipments", {
    method: "POST",
    key,
    body: JSON.stringify({ shipments: [{ courier: "delhivery", tracking_number: "1234567890121" }] }),
  });
  Object.assign(known, {
    webhook_id: [hook.data.id],
    delivery_id: deliveries.data.deliveries.map((d: { id: string }) => d.id).slice(0, 1),
    courier: ["delhivery", "auto"],
    slug: ["delhivery", "dhl"],
    tracking_number: ["1234567890121"],
    url: ["https://hooks.pbt.invalid/b"],
  });
});
afterAll(() => ctx.close());

/** Idempotency-Keys sent so far: a key sent again with another request is rightly 422 idempotency_key_reused. */
const keysSent = new Set<string>();

const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];

/** The problems with one answer (empty when it is what the document and the rules above say). */
function problems(entry: OperationEntry, req: GeneratedRequest, res: Response, text: string): string[] {
  const out: string[] = [];
  const status = String(res.status);
  if (res.status >= 500) out.push("5xx");
  const documented = entry.op.responses[status];
  if (!documented) return [...out, `status ${status} is not documented`];
  if (!res.headers.get("x-request-id")) out.push("no X-Request-Id");
  const authed = Array.isArray(entry.op.security) && entry.op.security.length > 0;
  for (const [name, h] of Object.entries((documented.headers ?? {}) as Record<string, any>)) {
    const got = res.headers.get(name);
    const schema = h.$ref ? v.doc.components.headers[h.$ref.split("/").pop()].schema : h.schema;
    if (got !== null && schema?.type === "integer" && !/^[0-9]+$/.test(got)) out.push(`header ${name}: ${got}`);
  }
  if (authed && res.status < 300) for (const h of RATE_LIMIT_HEADERS) if (!res.headers.get(h)) out.push(`no ${h}`);
  if (authed && req.key !== "valid" && res.status !== 401) out.push("no key, not 401");
  if (status === "204") return text === "" ? out : [...out, "body on 204"];
  const media = Object.keys(documented.content ?? {})[0];
  const type = res.headers.get("content-type") ?? "";
  if (!media || !type.startsWith(media)) return [...out, `content type ${type}, documented ${media}`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...out, "not JSON"];
  }
  const errors = v.errors(
    body,
    "paths",
    entry.template,
    entry.method.toLowerCase(),
    "responses",
    status,
    "content",
    media,
    "schema",
  );
  if (errors.length) out.push(`schema: ${errors.slice(0, 3).join("; ")}`);
  if (req.key === "valid" || !authed) {
    const locs: string[] =
      res.status === 422 ? (body as { detail: { loc: unknown[] }[] }).detail.map((i) => i.loc.join(".")) : [];
    const limited = res.status === 429;
    if (req.invalid && !limited) {
      const at = req.invalid.where === "body" ? "body" : `${req.invalid.where}.${req.invalid.name}`;
      if (res.status !== 422) out.push(`invalid ${at} answered ${status}`);
      else if (!locs.some((l) => l === at || l.startsWith(`${at}.`)))
        out.push(`invalid ${at}, 422 names ${locs.join(", ")}`);
    } else if (!req.invalid && res.status === 422) {
      const rules = EXTRA_RULES[entry.op.operationId] ?? [];
      const idem = req.headers["Idempotency-Key"];
      const prose = (i: { loc: unknown[]; msg: string; type: string }) => {
        const l = i.loc.join(".");
        if (l === "header.Idempotency-Key")
          return idem !== undefined && keysSent.has(idem) && i.type === "idempotency_key_reused";
        return rules.some(([at, msg]) => (at.endsWith(".") ? l.startsWith(at) : l === at) && msg.test(i.msg));
      };
      if (!(body as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail.every(prose))
        out.push(`valid request refused: ${text.slice(0, 300)}`);
    }
  }
  return out;
}

test(`every operation of the document, ${RUNS} generated requests each (seed ${SEED}): documented answers, never 5xx`, async () => {
  const entries = operationsOf(v.doc);
  expect(entries.length).toBeGreaterThanOrEqual(20);
  const statuses = new Map<string, number>();
  for (const entry of entries) {
    const demo = entry.op.operationId === "demoTrack";
    const arb = requestsFor(v, entry, known, { valid: key, bad: `ctk_${"B".repeat(43)}` }, confine);
    await fc.assert(
      fc.asyncProperty(arb, async (req) => {
        // A fresh rate-limit minute per request (and a fresh demo allowance: 5 an hour), so validation is reached.
        ctx.clock.advance(demo ? 13 * 60_000 : 61_000);
        const url = (() => {
          try {
            return req.body && JSON.parse(req.body)?.url;
          } catch {
            return undefined;
          }
        })();
        if (typeof url === "string" && URL.canParse(url.trim()) && isIpLiteral(new URL(url.trim()).hostname))
          throw new Error(`unconfined URL ${url}`);
        const res = await ctx.app.handle(
          new Request(`http://localhost${req.url}`, { method: req.method, headers: req.headers, body: req.body }),
        );
        const text = await res.text();
        const k = `${entry.op.operationId} ${res.status}`;
        statuses.set(k, (statuses.get(k) ?? 0) + 1);
        const found = problems(entry, req, res, text);
        if (req.headers["Idempotency-Key"] !== undefined) keysSent.add(req.headers["Idempotency-Key"]);
        if (found.length)
          throw new Error(
            `${req.method} ${req.url.slice(0, 300)} key=${req.key} body=${req.body?.slice(0, 200)} → ${res.status}: ${found.join(" | ")}`,
          );
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }
  // Each operation was reached past validation at least once with a valid key (a 2xx or its own 4xx).
  const reached = entries.filter((e) =>
    [...statuses.keys()].some((k) => k.startsWith(`${e.op.operationId} `) && !/ (401|422|429)$/.test(k)),
  );
  expect(entries.filter((e) => !reached.includes(e)).map((e) => e.op.operationId)).toEqual([]);
}, 120_000);
