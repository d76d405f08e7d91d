/**
 * The sandbox echo receiver (docs/webhooks.md, "The sandbox echo receiver"): `POST /sandbox/webhook-echo` exists only
 * with sandbox couriers and never in the OpenAPI document; its exact URL (`PUBLIC_BASE_URL/sandbox/webhook-echo`) is
 * the one URL the address check admits on loopback, only in sandbox mode, and only on loopback (a private address
 * stays refused). Live mode keeps the guard whole.
 *
 * NETWORK SAFETY: deliveries go to a loopback receiver only; the private address is refused before any connection.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/configure.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { sandboxEcho, SANDBOX_ECHO_PATH } from "../../src/modules/postman/echo.ts";
import { WebhookSender, type SendRequest } from "../../src/modules/webhooks/delivery/http.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, testCert, type Receiver } from "../webhooks/receiver.ts";

const ECHO = "https://localhost:8443/sandbox/webhook-echo";
const createBody = (url: string) => JSON.stringify({ url, events: ["tracking.delivered"], mode: "test" });

describe("sandbox mode", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await testContext({ PORT: "8443" });
  });
  afterAll(async () => ctx?.close());

  test("the echo answers 200 to a delivery, echoing a well-formed event id; it is not in the OpenAPI document", async () => {
    const [res, body] = await ctx.call(SANDBOX_ECHO_PATH, {
      method: "POST",
      body: "{}",
      headers: { "x-webhook-event-id": "evt_01abc" },
    });
    expect(res.status).toBe(200);
    expect(body).toEqual({ success: true, data: { received: true, event_id: "evt_01abc" } });
    const [, hostile] = await ctx.call(SANDBOX_ECHO_PATH, {
      method: "POST",
      body: "not json",
      headers: { "x-webhook-event-id": "<script>" },
    });
    expect(hostile).toEqual({ success: true, data: { received: true, event_id: null } });
    const [, doc] = await ctx.call("/openapi.json");
    // The echo is never documented (the sandbox advance operation is, in sandbox mode: a customer-facing route).
    expect(Object.keys(doc.paths).filter((p) => p.includes("webhook-echo"))).toEqual([]);
  });

  test("only the exact echo URL is accepted on loopback when creating a webhook", async () => {
    const { key } = await ctx.account("growth");
    expect(sandboxEcho(ctx.config)?.url).toBe(ECHO);
    const [ok, created] = await ctx.call("/v1/webhooks", { method: "POST", key, body: createBody(ECHO) });
    expect(ok.status).toBe(201);
    expect(created.data.url).toBe(ECHO);
    for (const url of [
      `${ECHO}?x=1`,
      "https://localhost:8443/sandbox/webhook-echo/",
      "https://localhost:8443/v1/couriers",
      "https://127.0.0.1:8443/sandbox/webhook-echo",
      "https://localhost:9090/sandbox/webhook-echo",
    ]) {
      const [res] = await ctx.call("/v1/webhooks", { method: "POST", key, body: createBody(url) });
      expect(`${url} → ${res.status}`).toBe(`${url} → 422`);
    }
  });
});

describe("live mode", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await testContext({ PORT: "8443", COURIER_MODE: "live" });
  });
  afterAll(async () => ctx?.close());

  test("there is no echo route and its URL is refused like any loopback URL", async () => {
    expect(sandboxEcho(ctx.config)).toBeUndefined();
    const [res] = await ctx.call(SANDBOX_ECHO_PATH, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    const { key } = await ctx.account("growth");
    const [refused, body] = await ctx.call("/v1/webhooks", { method: "POST", key, body: createBody(ECHO) });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(body)).toContain("loopback");
  });
});

describe("the sender", () => {
  let receiver: Receiver;
  let caFile: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    caFile = (await testCert()).caFile;
  });
  afterAll(() => receiver?.stop());

  const req = (url: string): SendRequest => ({ url, body: new TextEncoder().encode("{}"), headers: {} });
  const sender = (echoUrl: string | undefined, resolve: Record<string, string> = {}) =>
    new WebhookSender({
      allowCidrs: [],
      timeoutMs: 5_000,
      clock: systemClock,
      resolver: async (host) =>
        resolve[host]
          ? [{ address: resolve[host]!, family: 4 }]
          : Promise.reject(Object.assign(new Error("no"), { code: "ENOTFOUND" })),
      ...(echoUrl ? { sandboxEcho: { url: echoUrl, caFile } } : {}),
    });

  test("delivers to the echo URL on loopback, trusting the service's certificate; every other loopback URL is dropped", async () => {
    const echoUrl = receiver.url(SANDBOX_ECHO_PATH);
    const s = sender(echoUrl);
    const delivered = await s.send(req(echoUrl));
    expect(delivered.kind).toBe("delivered");
    expect(receiver.on(SANDBOX_ECHO_PATH)).toHaveLength(1);
    const other = await s.send(req(receiver.url("/elsewhere")));
    expect(other).toMatchObject({ kind: "dropped", error: "address_blocked" });
    expect(receiver.on("/elsewhere")).toHaveLength(0);
    await s.close();
  });

  test("without a sandbox echo (live mode) the same URL is dropped", async () => {
    const s = sender(undefined);
    expect(await s.send(req(receiver.url(SANDBOX_ECHO_PATH)))).toMatchObject({
      kind: "dropped",
      error: "address_blocked",
    });
    expect(receiver.on(SANDBOX_ECHO_PATH)).toHaveLength(1);
    await s.close();
  });

  test("an echo URL whose host resolves to a private address is still dropped, before any connection", async () => {
    const url = "https://echo.test:8443/sandbox/webhook-echo";
    const s = sender(url, { "echo.test": "10.1.2.3" });
    expect(await s.send(req(url))).toMatchObject({ kind: "dropped", error: "address_blocked" });
    await s.close();
  });
});

test("live configuration: no echo, whatever the base URL; sandbox with an http base URL: no echo URL either", () => {
  expect(sandboxEcho(loadConfig({ COURIER_MODE: "live", PUBLIC_BASE_URL: "https://localhost:8443" }))).toBeUndefined();
  expect(
    sandboxEcho(loadConfig({ COURIER_MODE: "sandbox", PUBLIC_BASE_URL: "http://localhost:8080" })),
  ).toBeUndefined();
  expect(
    sandboxEcho(loadConfig({ COURIER_MODE: "sandbox", PUBLIC_BASE_URL: "https://api.example.com/" })),
  ).toMatchObject({ url: "https://api.example.com/sandbox/webhook-echo" });
});
