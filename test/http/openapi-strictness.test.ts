/**
 * The OpenAPI document is as strict as the service (docs/api-conventions.md): webhook header names and URLs are
 * refused by the document exactly when the service refuses them (the prose rules aside: a private address), a
 * leap second is a date-time for both, each operation has its own example Idempotency-Key, and the `links` let a
 * generic client chain create → read → update → delete for webhooks, follow → read → update → unfollow for
 * shipments, and test fire → deliveries → redeliver. Real app, real database, a real receiver on loopback.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HEADER_NAME_PATTERN } from "../../src/modules/webhooks/headers.ts";
import { docValidator, type DocValidator } from "../client/openapi.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

type Json = Record<string, any>;

let ctx: TestContext;
let v: DocValidator;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  ctx = await testContext(await webhookEnv());
  v = docValidator((await ctx.call("/openapi.json"))[1]);
});
afterAll(async () => {
  receiver?.stop();
  await ctx?.close();
});

const METHODS = ["get", "put", "post", "delete", "patch"];
const operations = () =>
  Object.entries(v.doc.paths as Json).flatMap(([template, ops]) =>
    Object.entries(ops as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ template, method: method.toUpperCase(), op: op as Json })),
  );
const operation = (id: string) => operations().find((o) => o.op.operationId === id)!;

/** A webhook to change, and the verdicts on `body` of the document (WebhookUpdate) and of the service (PUT). */
async function verdicts(key: string, id: string, body: Json): Promise<{ doc: boolean; service: boolean; res: Json }> {
  const doc = v.errors(body, "components", "schemas", "WebhookUpdate").length === 0;
  const [res, out] = await ctx.call(`/v1/webhooks/${id}`, { method: "PUT", key, body: JSON.stringify(body) });
  expect([200, 422]).toContain(res.status);
  return { doc, service: res.status === 200, res: out };
}

describe("the document refuses what the service refuses", () => {
  let key: string;
  let id: string;
  beforeAll(async () => {
    key = (await ctx.account("business")).key;
    const [, hook] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: JSON.stringify({ url: "https://hooks.strict.invalid/a", events: ["tracking.delivered"], mode: "test" }),
    });
    id = hook.data.id;
  });

  test("custom header names: an HTTP token for both, by the same pattern", async () => {
    const names = [
      "X Bad",
      "X:Y",
      "Ünï",
      "X\tY",
      "(x)",
      "x@y",
      "x/y",
      "",
      "X-Good",
      "X-Route_1.v2",
      "a!#$%&'*+.^_`|~-9",
    ];
    const seen = [];
    for (const name of names) {
      const r = await verdicts(key, id, { headers: { [name]: "v" } });
      seen.push([name, r.doc, r.service]);
    }
    expect(seen).toEqual(
      names.map((n) => [n, new RegExp(HEADER_NAME_PATTERN).test(n), new RegExp(HEADER_NAME_PATTERN).test(n)]),
    );
    expect(seen.filter(([, d]) => d).map(([n]) => n)).toEqual(["X-Good", "X-Route_1.v2", "a!#$%&'*+.^_`|~-9"]);
    // The service's 422 still says why, at the name.
    const { res } = await verdicts(key, id, { headers: { "X Bad": "v" } });
    expect(res.detail).toEqual([
      expect.objectContaining({ loc: ["body", "headers", "X Bad"], msg: expect.stringContaining("HTTP token") }),
    ]);
  });

  test("webhook URLs: control characters, numeric and malformed hosts, bad ports are refused by both; good URLs by neither", async () => {
    const urls = [
      "https://0/",
      "https://123/hook",
      "https://134744072/",
      "https://0x7f000001/",
      "https://010.8.8.8/",
      "https://8.8.8/",
      "https://a.b/\u0001x",
      "https://a.b/x\u007f",
      "https://a.b/x\u0085",
      "https://a.b?x=\u0000",
      "https://a.123/",
      "https://a.0x1f/",
      "https://a.b:0/",
      "https://a.b:65536/",
      "https://a.b:/",
      "https://a/",
      "https://a..b/",
      "https://a_b.example/",
      "https://-a.example/",
      "https://bücher.example/",
      "https://[2001:4860::8888:1:2:3:4:5]/",
      "https://example.com/hooks/courier",
      "HTTPS://Example.COM:8443/a/b?c=d&e=%20",
      "https://8.8.8.8/",
      "https://[2001:4860::8888]/x",
      "https://xn--bcher-kva.example/",
      "https://a-b.c-d.example./x",
      "https://hooks.example.com:65535",
      "https://127.0.0.1:1/loopback-allowed-here",
    ];
    const seen = [];
    for (const url of urls) {
      const r = await verdicts(key, id, { url });
      seen.push([url, r.doc, r.service]);
    }
    expect(seen.filter(([, doc, service]) => doc !== service)).toEqual([]);
    expect(seen.filter(([, doc]) => doc).map(([u]) => u)).toEqual(
      urls.slice(urls.indexOf("https://example.com/hooks/courier")),
    );
    // What the document states in prose only: a private address (the service resolves and classifies it).
    const privateIp = await verdicts(key, id, { url: "https://10.1.2.3/" });
    expect([privateIp.doc, privateIp.service]).toEqual([true, false]);
    expect(privateIp.res.detail[0].msg).toContain("public IP address");
    const url = v.doc.components.schemas.WebhookUpdate.properties.url;
    expect(url.description).toContain("public IP");
  });

  test("a leap second is a date-time for both (RFC 3339 section 5.6)", async () => {
    const leap = "2026-06-30T23:59:60Z";
    const param = operation("listShipments").op.parameters.find((p: Json) => p.name === "updated_since");
    expect(param.schema.format).toBe("date-time");
    const ajvSays = docValidator({
      ...v.doc,
      components: { ...v.doc.components, schemas: { ...v.doc.components.schemas, Leap: param.schema } },
    });
    expect(ajvSays.errors(leap, "components", "schemas", "Leap")).toEqual([]);
    for (const path of [
      `/v1/shipments?updated_since=${leap}`,
      `/v1/events?since=${new Date(ctx.clock.now() - 86_400_000).toISOString().slice(0, 10)}T23:59:60Z`,
      `/v1/webhooks/${id}/deliveries?since=${leap}&until=2026-12-31T23:59:60Z`,
    ]) {
      const [res] = await ctx.call(path, { key });
      expect([path, res.status]).toEqual([path, 200]);
    }
  });
});

describe("examples", () => {
  test("every operation that takes an Idempotency-Key has its own example key, valid for the parameter", () => {
    const keyed = operations().flatMap(({ op }) =>
      (op.parameters ?? [])
        .filter((p: Json) => p.in === "header" && p.name === "Idempotency-Key")
        .map((p: Json) => ({ id: op.operationId as string, p })),
    );
    expect(keyed.length).toBeGreaterThanOrEqual(9);
    const examples = keyed.map(({ p }) => p.example as string);
    expect(new Set(examples).size).toBe(keyed.length);
    for (const { id, p } of keyed) expect([id, new RegExp(p.schema.pattern).test(p.example)]).toEqual([id, true]);
  });
});

/** One answered request of the chain: what a link's runtime expressions read. */
interface Step {
  op: Json;
  status: number;
  body: any;
  path: Record<string, string>;
}

/** Calls operation `id` as a generic client would: the path from `path`, the body from its example, its example Idempotency-Key. */
async function callOp(key: string, id: string, path: Record<string, string>, body?: unknown): Promise<Step> {
  const { template, method, op } = operation(id);
  const url = template.replace(/\{(\w+)\}/g, (_, n) => encodeURIComponent(path[n]!));
  const headers: Record<string, string> = {};
  const idem = (op.parameters ?? []).find((p: Json) => p.name === "Idempotency-Key");
  if (idem) headers["Idempotency-Key"] = idem.example;
  const payload = body ?? op.requestBody?.content["application/json"].example;
  const [res, out] = await ctx.call(url, {
    method,
    key,
    headers,
    ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}),
  });
  return { op, status: res.status, body: out, path };
}

const pointer = (doc: unknown, ptr: string) =>
  ptr
    .split("/")
    .slice(1)
    .reduce((n: any, k) => n?.[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc);

/** The value of a link's runtime expression (OpenAPI 3.1, "Runtime Expressions") after `step`. */
function evaluate(step: Step, expr: string): string {
  if (expr.startsWith("$response.body#")) return String(pointer(step.body, expr.slice("$response.body#".length)));
  const m = /^\$request\.path\.(\w+)$/.exec(expr);
  if (m) return step.path[m[1]!]!;
  throw new Error(`expression not understood: ${expr}`);
}

/** Follows link `name` of `step`'s response. */
async function follow(key: string, step: Step, name: string, body?: unknown): Promise<Step> {
  const link = step.op.responses[String(step.status)]?.links?.[name];
  expect([step.op.operationId, name, link !== undefined]).toEqual([step.op.operationId, name, true]);
  const path = Object.fromEntries(
    Object.entries(link.parameters as Record<string, string>).map(([p, e]) => [p, evaluate(step, e)]),
  );
  return callOp(key, link.operationId, path, body);
}

describe("links", () => {
  test("each link names an operation, fills exactly its path parameters, and reads a value the example response has", () => {
    let count = 0;
    for (const { op } of operations())
      for (const [status, r] of Object.entries(op.responses as Json))
        for (const [name, link] of Object.entries((r.links ?? {}) as Json)) {
          count++;
          const target = operation(link.operationId);
          expect([op.operationId, name, target !== undefined]).toEqual([op.operationId, name, true]);
          const pathParams = (target.op.parameters ?? []).filter((p: Json) => p.in === "path").map((p: Json) => p.name);
          expect([op.operationId, name, Object.keys(link.parameters).sort()]).toEqual([
            op.operationId,
            name,
            pathParams.sort(),
          ]);
          expect(link.description).toBeString();
          const example = r.content?.["application/json"]?.example;
          for (const [p, expr] of Object.entries(link.parameters as Record<string, string>)) {
            expect(expr).toMatch(/^\$(response\.body#\/[\w/]+|request\.path\.\w+)$/);
            if (!expr.startsWith("$response.body#")) {
              expect(op.parameters.some((q: Json) => q.in === "path" && `$request.path.${q.name}` === expr)).toBe(true);
              continue;
            }
            const value = pointer(example, expr.slice("$response.body#".length));
            const index = target.op.parameters.findIndex((q: Json) => q.name === p);
            expect([op.operationId, status, name, p, typeof value]).toEqual([
              op.operationId,
              status,
              name,
              p,
              "string",
            ]);
            expect(
              v.errors(
                value,
                "paths",
                target.template,
                target.method.toLowerCase(),
                "parameters",
                String(index),
                "schema",
              ),
            ).toEqual([]);
          }
        }
    expect(count).toBeGreaterThanOrEqual(15);
  });

  test("webhooks: create → read → update → delete by links alone; the created link then reads 404", async () => {
    const { key } = await ctx.account("growth");
    const created = await callOp(key, "createWebhook", {});
    expect(created.status).toBe(201);
    const read = await follow(key, created, "getWebhook");
    expect([read.status, read.body.data.id]).toEqual([200, created.body.data.id]);
    const updated = await follow(key, read, "updateWebhook");
    expect([updated.status, updated.body.data.description]).toEqual([200, "Order updates (all events)"]);
    expect((await follow(key, updated, "deleteWebhook")).status).toBe(204);
    expect((await follow(key, created, "getWebhook")).status).toBe(404);
  });

  test("shipments: follow → read → update → unfollow by links alone; the follow's link then reads 404", async () => {
    const { key } = await ctx.account("growth");
    const followed = await callOp(key, "followShipments", {});
    expect(followed.status).toBe(202);
    const read = await follow(key, followed, "getShipment");
    expect(read.status).toBe(200);
    const updated = await follow(key, read, "updateShipment");
    expect(updated.status).toBe(200);
    expect((await follow(key, updated, "unfollowShipment")).status).toBe(204);
    expect((await follow(key, followed, "getShipment")).status).toBe(404);
  });

  test("deliveries: test fire → the delivery log → redeliver → the log again, by links alone", async () => {
    const { key } = await ctx.account("growth");
    const example = operation("createWebhook").op.requestBody.content["application/json"].example;
    const created = await callOp(key, "createWebhook", {}, { ...example, url: receiver.url("/links") });
    expect(created.status).toBe(201);
    const fired = await follow(key, created, "testWebhook");
    expect([fired.status, fired.body.data.delivered]).toEqual([200, true]);
    const log = await follow(key, fired, "listWebhookDeliveries");
    expect([log.status, log.body.data.count]).toEqual([200, 1]);
    const again = await follow(key, log, "redeliverWebhookDelivery");
    expect(again.status).toBe(202);
    const after = await follow(key, again, "listWebhookDeliveries");
    expect(after.status).toBe(200);
    expect(after.body.data.deliveries.map((d: Json) => d.id)).toContain(again.body.data.delivery_id);
  });
});
