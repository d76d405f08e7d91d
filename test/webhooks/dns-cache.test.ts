/**
 * The delivery worker's DNS cache: a host name is resolved once per TTL, and
 * the cache never gets around the address check (spec: Delivery rules 3: the
 * URL is checked before every attempt). Names are answered by a fake
 * resolver; blocked addresses are data only and never connected to.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { deliveries } from "../../src/db/schema/index.ts";
import {
  cachingResolver,
  checkHost,
  DNS_CACHE_TTL_MS,
  type ResolvedAddress,
  type Resolver,
} from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

describe("cachingResolver", () => {
  const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }];

  test("one lookup per host per TTL, concurrent lookups share one, failures are not kept", async () => {
    let t = 0;
    const calls: string[] = [];
    let fail = false;
    const inner: Resolver = async (host) => {
      calls.push(host);
      await Promise.resolve(); // answers later, like a real lookup: the 20 calls below all start before it does
      if (fail) throw Object.assign(new Error("down"), { code: "EAI_AGAIN" });
      return v4("93.184.216.34");
    };
    const r = cachingResolver(inner, { ttlMs: 1_000, now: () => t });
    const many = await Promise.all(Array.from({ length: 20 }, () => r("hooks.example")));
    expect(many.every((a) => a[0]!.address === "93.184.216.34")).toBe(true);
    expect(calls).toEqual(["hooks.example"]);
    t = 999;
    await r("HOOKS.example");
    expect(calls).toHaveLength(1);
    t = 1_000; // expired
    fail = true;
    await expect(r("hooks.example")).rejects.toThrow("down");
    await expect(r("hooks.example")).rejects.toThrow("down");
    expect(calls).toHaveLength(3);
    fail = false;
    await r("hooks.example");
    await r("hooks.example");
    expect(calls).toHaveLength(4);
  });

  test("a cached answer is classified again on every check: a private address blocks every time", async () => {
    let calls = 0;
    const r = cachingResolver(async () => (calls++, v4("10.0.0.7")), { now: () => 0 });
    for (let i = 0; i < 3; i++)
      expect(await checkHost("intranet.example", [], r)).toMatchObject({ ok: false, reason: "address_blocked" });
    expect(calls).toBe(1);
  });

  test("keeps at most maxHosts names", async () => {
    const calls: string[] = [];
    const r = cachingResolver(async (h) => (calls.push(h), v4("93.184.216.34")), { maxHosts: 2, now: () => 0 });
    for (const h of ["a.example", "b.example", "c.example", "a.example"]) await r(h);
    expect(calls).toEqual(["a.example", "b.example", "c.example", "a.example"]);
  });
});

describe("the worker's cache", () => {
  let ctx: TestContext;
  let rx: Receiver;
  let worker: DeliveryWorker;
  const table: Record<string, string> = { "receiver.test": "127.0.0.1" };
  const lookups: string[] = [];
  const resolver: Resolver = async (host) => {
    lookups.push(host);
    const a = table[host];
    if (!a) throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
    return [{ address: a, family: 4 }];
  };
  beforeAll(async () => {
    ctx = await testContext(await webhookEnv());
    rx = await startReceiver();
    worker = createDeliveryWorker({ ...ctx.deps, resolver });
  });
  afterAll(async () => {
    await worker.stop();
    rx.stop();
    await ctx.close();
  });

  test("many attempts to one host resolve it once; after the TTL a new answer is checked again and a private one drops the delivery", async () => {
    const acc = await ctx.account("business");
    const [res, body] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({
        url: `https://receiver.test:${rx.port}/cached`,
        events: ["tracking.updated"],
        mode: "live",
      }),
    });
    expect(res.status).toBe(201);
    const shp = await shipment(ctx.tdb.db, [acc.id]);
    for (let i = 0; i < 10; i++) await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
    expect(await worker.runOnce()).toBe(10);
    expect(rx.on("/cached")).toHaveLength(10);
    expect(lookups).toEqual(["receiver.test"]);

    // The name now points at a private address (DNS rebinding). Past the TTL the new answer is
    // looked up, classified and refused before any socket opens; nothing reaches the receiver.
    table["receiver.test"] = "10.0.0.7";
    ctx.clock.advance(DNS_CACHE_TTL_MS);
    await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
    expect(await worker.runOnce()).toBe(1);
    expect(lookups).toEqual(["receiver.test", "receiver.test"]);
    expect(rx.on("/cached")).toHaveLength(10);
    const rows = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, body.data.id));
    expect(rows.map((r) => r.state).sort()).toEqual([...Array(10).fill("delivered"), "dropped"]);
    expect(rows.find((r) => r.state === "dropped")!.lastError).toBe("address_blocked");
  });
});
