import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { addressLimitKey, clientIp, normaliseAddress } from "../../src/http/client-ip.ts";
import { loadTls, selfSignedCertificate } from "../../src/http/tls.ts";
import { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";
import { servicesFor } from "../helpers/services.ts";

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ctx = await testContext();
  key = (await ctx.account("growth")).key;
});
afterAll(() => ctx.close());

describe("bad input always gets a documented shape", () => {
  test("unknown route → 404 envelope with X-Request-Id", async () => {
    const [res, body] = await ctx.call("/v2/anything");
    expect(res.status).toBe(404);
    expect(body).toEqual({ success: false, error: { code: "NOT_FOUND", message: expect.any(String) } });
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("hostile query strings never give a 500", async () => {
    const hostile = [
      "courier=delhivery&courier=dhl&tracking_number=1234567890120",
      "courier=%00%01&tracking_number=1",
      "courier=delhivery&tracking_number=%F0%9F%93%A6",
      "courier=" + "a".repeat(5000) + "&tracking_number=1",
      "courier=delhivery'%20OR%201=1--&tracking_number=1",
      "courier=delhivery&tracking_number=..%2F..%2Fetc%2Fpasswd",
      "courier[]=x&tracking_number[a]=1",
    ];
    for (const q of hostile) {
      const [res, body] = await ctx.call(`/v1/track?${q}`, { key });
      expect(res.status).toBeLessThan(500);
      expect(res.status).not.toBe(200 === res.status ? -1 : 500);
      if (res.status === 422) expect(Array.isArray(body.detail)).toBe(true);
      else if (res.status !== 200) expect(body.success).toBe(false);
    }
  });

  test("body over 64 KiB → 413 PAYLOAD_TOO_LARGE (by Content-Length and by actual size)", async () => {
    const big = JSON.stringify({ url: "https://example.com", pad: "x".repeat(70_000) });
    const [res, body] = await ctx.call("/v1/webhooks", { method: "POST", key, body: big });
    expect(res.status).toBe(413);
    expect(body.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("invalid JSON → 422 json_invalid at loc [body]; wrong content type is still read as JSON", async () => {
    const [res, body] = await ctx.call("/v1/webhooks", { method: "POST", key, body: "{not json" });
    expect(res.status).toBe(422);
    expect(body).toEqual({ detail: [{ loc: ["body"], msg: "Invalid JSON", type: "json_invalid" }] });
    const [res2, body2] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key,
      body: "[]",
      headers: { "content-type": "text/plain" },
    });
    expect(res2.status).toBe(422);
    expect(body2.detail[0].loc[0]).toBe("body");
  });
});

describe("HTTPS only", () => {
  test("TRUST_PROXY mode refuses X-Forwarded-Proto other than https with 400 HTTPS_REQUIRED", async () => {
    const app = buildApp({ ...ctx.deps, config: loadConfig({ TRUST_PROXY: "1", COURIER_MODE: "sandbox" }) });
    const plain = await app.handle(
      new Request("http://localhost/billing/plans", { headers: { "x-forwarded-proto": "http" } }),
    );
    expect(plain.status).toBe(400);
    expect((await plain.json()).error.code).toBe("HTTPS_REQUIRED");
    const none = await app.handle(new Request("http://localhost/billing/plans"));
    expect(none.status).toBe(400);
    const ok = await app.handle(
      new Request("http://localhost/billing/plans", { headers: { "x-forwarded-proto": "https" } }),
    );
    expect(ok.status).toBe(200);
  });

  test("client IP: the socket address unless TRUST_PROXY; a spoofed header from an untrusted peer changes nothing", () => {
    expect(clientIp("203.0.113.9", "1.2.3.4", undefined)).toBe("203.0.113.9");
    expect(clientIp("127.0.0.1", "1.2.3.4", 1)).toBe("1.2.3.4");
    expect(clientIp("127.0.0.1", "6.6.6.6, 1.2.3.4", 1)).toBe("1.2.3.4");
    expect(clientIp("127.0.0.1", "6.6.6.6, 1.2.3.4, 198.51.100.2", 2)).toBe("1.2.3.4");
    expect(clientIp("127.0.0.1", "1.2.3.4", 5)).toBe("1.2.3.4");
  });

  test("client IP normalised: port dropped, IPv4-mapped as IPv4, IPv6 compact without zone; limits count IPv6 by /64", () => {
    const cases: [string, string, string][] = [
      ["203.0.113.9:4711", "203.0.113.9", "203.0.113.9"],
      ["::ffff:203.0.113.9", "203.0.113.9", "203.0.113.9"],
      ["[::ffff:203.0.113.9]:80", "203.0.113.9", "203.0.113.9"],
      ["[2001:DB8:0:0:1::5]:443", "2001:db8::1:0:0:5", "2001:db8::/64"],
      ["2001:db8:aa:1:ffff:ffff:ffff:ffff", "2001:db8:aa:1:ffff:ffff:ffff:ffff", "2001:db8:aa:1::/64"],
      ["fe80::1%eth0", "fe80::1", "fe80::/64"],
      ["not-an-address", "not-an-address", "not-an-address"],
    ];
    for (const [raw, ip, key] of cases) {
      expect(clientIp("127.0.0.1", raw, 1)).toBe(ip);
      expect(addressLimitKey(ip)).toBe(key);
    }
    expect(clientIp("::ffff:127.0.0.1", null, undefined)).toBe("127.0.0.1");
    expect(clientIp(undefined, null, undefined)).toBe("unknown");
    expect(normaliseAddress("x".repeat(200))).toBeUndefined();
    expect(clientIp("127.0.0.1", "y".repeat(200), 1)).toHaveLength(64);
  });

  test("self-signed certificate generated once under DATA_DIR, then reused; configured files win", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ct-tls-"));
    const first = await loadTls({ tls: undefined, dataDir: dir });
    expect(first.source).toBe("generated");
    const again = await loadTls({ tls: undefined, dataDir: dir });
    expect(again.source).toBe("reused");
    expect(again.cert).toBe(first.cert);
    const own = await selfSignedCertificate(["api.test"]);
    writeFileSync(join(dir, "c.pem"), own.cert);
    writeFileSync(join(dir, "k.pem"), own.key);
    const files = await loadTls({ tls: { certFile: join(dir, "c.pem"), keyFile: join(dir, "k.pem") }, dataDir: dir });
    expect(files.source).toBe("files");
    expect(files.cert).toBe(own.cert);
  });

  test("a real TLS server: HTTPS answers with the certificate; plain HTTP to the TLS port gets no HTTP answer", async () => {
    const { cert, key: tlsKey } = await selfSignedCertificate();
    const app = buildApp(ctx.deps).listen({ port: 0, hostname: "127.0.0.1", tls: { cert, key: tlsKey } });
    const port = app.server!.port;
    try {
      const res = await fetch(`https://localhost:${port}/billing/plans`, { tls: { ca: cert } } as RequestInit);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      const plain = await fetch(`http://127.0.0.1:${port}/billing/plans`).then(
        (r) => r.status,
        () => "refused",
      );
      expect(plain).not.toBe(200);
    } finally {
      await app.stop(true);
    }
  });

  test("config: bad values stop the start naming the variable", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: "1,2" })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ TLS_CERT_FILE: "/x" })).toThrow(/TLS_KEY_FILE/);
    expect(() => loadConfig({ ROLE: "boss" })).toThrow(/ROLE/);
    expect(loadConfig({}).port).toBe(8443);
    expect(loadConfig({ DHL_API_KEY: "k" }).courierMode).toBe("live");
    expect(loadConfig({}).courierMode).toBe("sandbox");
  });
});

describe("database outage", () => {
  test("503 SERVICE_UNAVAILABLE while PostgreSQL is unreachable, and recovery without a restart", async () => {
    const relay = startPgRelay(ctx.tdb.url);
    const conn = connect(relay.url, { max: 2 });
    const app = buildApp({ ...ctx.deps, db: conn.db, services: servicesFor(conn.db, ctx.clock) });
    try {
      expect((await app.handle(new Request("http://localhost/readyz"))).status).toBe(200);
      const a = await ctx.account("free");
      relay.stop();
      const down = await app.handle(new Request("http://localhost/v1/couriers", { headers: { "x-api-key": a.key } }));
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({
        success: false,
        error: { code: "SERVICE_UNAVAILABLE", message: expect.any(String) },
      });
      expect((await app.handle(new Request("http://localhost/readyz"))).status).toBe(503);
      relay.start();
      const up = await app.handle(new Request("http://localhost/v1/couriers", { headers: { "x-api-key": a.key } }));
      expect(up.status).toBe(200);
    } finally {
      relay.stop();
      await conn.sql.end({ timeout: 1 });
    }
  });
});
