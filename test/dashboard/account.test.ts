/** Dashboard overview, API keys, usage & billing, tracked shipments; cross-account isolation (docs/dashboard.md). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { eq } from "drizzle-orm";
import { accounts, apiKeys, follows, recheckSchedule, shipments } from "../../src/db/schema/index.ts";
import { corePlugin } from "../../src/http/core.ts";
import { newId } from "../../src/lib/ids.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import { dashboardModule } from "../../src/modules/dashboard/index.ts";
import type { BillingProvider } from "../../src/modules/dashboard/billing.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, inlineScripts, keyOf } from "./support.ts";

let ctx: TestContext;
let alice: Client;
let bob: Client;
let aliceKey: string;
let bobKey: string;
const aliceEmail = `alice-${Bun.randomUUIDv7().slice(-6)}@example.com`;

const accountId = async (email: string) =>
  (await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email)))[0]!.id;

beforeAll(async () => {
  ctx = await testContext();
  alice = new Client(ctx.app);
  bob = new Client(ctx.app);
  aliceKey = await alice.signUp(aliceEmail);
  bobKey = await bob.signUp(`bob-${Bun.randomUUIDv7().slice(-6)}@example.com`);
});
afterAll(() => ctx.close());

describe("API keys", () => {
  test("create shows the new key once with a copy button; its name is escaped; the list has prefix, created, last used", async () => {
    const csrf = await alice.csrf("/dashboard/keys");
    const [res, html] = await alice.post("/dashboard/keys", { _csrf: csrf, name: `<img src=x onerror=alert(1)>` });
    expect(res.status).toBe(201);
    const key = keyOf(html);
    expect(html).toContain('data-copy="new-key"');
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(inlineScripts(html)).toBe(0);
    expect((await ctx.call("/v1/couriers", { key }))[0].status).toBe(200);
    const [, list] = await alice.get("/dashboard/keys");
    expect(list).toContain(`${key.slice(0, 10)}…`);
    expect(list).not.toContain(key);
    expect(list).toMatch(/<td data-label="Last used">20\d\d-\d\d-\d\d \d\d:\d\d UTC<\/td>/); // last used, after the call above
  });

  test("name validation happens on the server", async () => {
    const csrf = await alice.csrf("/dashboard/keys");
    const [res, html] = await alice.post("/dashboard/keys", { _csrf: csrf, name: "x".repeat(61) });
    expect(res.status).toBe(422);
    expect(html).toContain("Use at most 60 printable characters.");
  });

  test("create without or with a wrong CSRF token is refused and creates nothing", async () => {
    const id = await accountId(aliceEmail);
    const before = (await ctx.tdb.db.select().from(apiKeys).where(eq(apiKeys.accountId, id))).length;
    expect((await alice.post("/dashboard/keys", { name: "x" }))[0].status).toBe(403);
    expect(
      (await alice.post("/dashboard/keys", { name: "x", _csrf: await bob.csrf("/dashboard/keys") }))[0].status,
    ).toBe(403);
    expect((await ctx.tdb.db.select().from(apiKeys).where(eq(apiKeys.accountId, id))).length).toBe(before);
  });

  test("revoke: another account cannot revoke the key; its owner can, and the key then fails with 401", async () => {
    const [row] = await ctx.tdb.db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.prefix, aliceKey.slice(0, 10)));
    const [res] = await bob.post(`/dashboard/keys/${row!.id}/revoke`, { _csrf: await bob.csrf("/dashboard/keys") });
    expect(res.status).toBe(404);
    expect((await ctx.call("/v1/couriers", { key: aliceKey }))[0].status).toBe(200);
    // Bob's key page never lists Alice's keys.
    expect((await bob.get("/dashboard/keys"))[1]).not.toContain(row!.id);

    const [ok] = await alice.post(`/dashboard/keys/${row!.id}/revoke`, { _csrf: await alice.csrf("/dashboard/keys") });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/dashboard/keys?done=revoked");
    expect((await ctx.call("/v1/couriers", { key: aliceKey }))[0].status).toBe(401);
    expect((await alice.get("/dashboard/keys?done=revoked"))[1]).toContain("The key is revoked");
  });
});

describe("usage and billing", () => {
  test("the overview and billing pages show used / quota, a progress bar, the reset date and the rate limit", async () => {
    await setUsage(ctx.tdb.db, await accountId(aliceEmail), 37, ctx.clock.now());
    for (const p of ["/dashboard", "/dashboard/billing"]) {
      const [res, html] = await alice.get(p);
      expect(res.status).toBe(200);
      expect(html).toContain(
        '<strong data-testid="usage-used">37</strong> of <span data-testid="usage-quota">100</span>',
      );
      expect(html).toContain('<progress max="100" value="37"');
      expect(html).toContain("2026-12-01 00:00 UTC"); // FakeClock: 2026-11-05
      expect(html).toContain("10 requests per minute");
    }
  });

  test("a used-up quota: /v1/track answers 402 with the upgrade link; upgrade on /dashboard/billing; the same key works at once", async () => {
    const c = new Client(ctx.app);
    const email = `upgrade-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    const key = await c.signUp(email);
    await setUsage(ctx.tdb.db, await accountId(email), 100, ctx.clock.now());
    const [r402, b402] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key });
    expect(r402.status).toBe(402);
    expect(b402.error.code).toBe("QUOTA_EXCEEDED");
    expect(b402.error.message).toContain("/dashboard/billing");
    expect((await c.get("/dashboard/billing"))[1]).toContain("Your quota is used up");

    const [res] = await c.post("/dashboard/billing", { _csrf: await c.csrf("/dashboard/billing"), plan: "growth" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/billing?done=plan-changed");
    const [, page] = await c.get("/dashboard/billing?done=plan-changed");
    expect(page).toContain('<dd data-testid="plan-name">Growth</dd>');
    expect(page).toContain("Your plan is changed");
    const [r200, b200] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key });
    expect(r200.status).toBe(200);
    expect(b200.usage).toMatchObject({ used: 101, quota: 150_000, plan: "growth" });
    expect(r200.headers.get("ratelimit-limit")).toBe("600");

    // Downgrade, invalid plan, CSRF.
    expect(
      (await c.post("/dashboard/billing", { _csrf: await c.csrf("/dashboard/billing"), plan: "starter" }))[0].status,
    ).toBe(303);
    expect((await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email)))[0]!.plan).toBe("starter");
    expect(
      (await c.post("/dashboard/billing", { _csrf: await c.csrf("/dashboard/billing"), plan: "platinum" }))[0].status,
    ).toBe(422);
    expect((await c.post("/dashboard/billing", { plan: "business" }))[0].status).toBe(403);
    expect((await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email)))[0]!.plan).toBe("starter");
  });

  test("a provider that declines leaves the plan as it was", async () => {
    const declining: BillingProvider = {
      label: "Declining test provider",
      requestPlanChange: async () => ({ status: "declined", reason: "card refused" }),
    };
    const app = new Elysia()
      .use(corePlugin({ log: ctx.deps.log, trustProxy: undefined }))
      .use(dashboardModule(ctx.deps, { billing: declining }));
    const c = new Client(app);
    const email = `declined-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    await c.signUp(email);
    const [res, html] = await c.post("/dashboard/billing", { _csrf: await c.csrf("/dashboard/billing"), plan: "pro" });
    expect(res.status).toBe(402);
    expect(html).toContain("The plan change was declined: card refused");
    expect((await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email)))[0]!.plan).toBe("free");
  });
});

describe("tracked shipments", () => {
  test("lists the account's followed shipments with state, last and next check; others' are invisible; text is escaped", async () => {
    const id = newId("shp");
    const awb = `<svg/onload=alert(1)>${Date.now()}`;
    await ctx.tdb.db.insert(shipments).values({
      id,
      courier: "delhivery",
      trackingNumber: awb,
      state: "in_transit",
      mostRecentStatus: "In transit",
      followers: 1,
      lastCheckedAt: new Date(Date.UTC(2026, 10, 5, 8, 0)),
      checkpoints: [
        { at: "2026-11-05T08:00:00.000Z", state: "in_transit", status: "In transit", location: "Delhi" },
      ] as never,
    });
    await ctx.tdb.db.insert(recheckSchedule).values({
      shipmentId: id,
      courier: "delhivery",
      trackingNumber: awb,
      dueAt: new Date(Date.UTC(2026, 10, 5, 16, 0)),
    });
    await ctx.tdb.db.insert(follows).values({ accountId: await accountId(aliceEmail), shipmentId: id });
    const [, html] = await alice.get("/dashboard/shipments");
    expect(html).toContain("&lt;svg/onload=alert(1)&gt;");
    expect(html).not.toContain("<svg/onload");
    expect(html).toContain("2026-11-05 08:00 UTC");
    expect(html).toContain("2026-11-05 16:00 UTC");
    expect(html).toContain("in transit");
    const [, other] = await bob.get("/dashboard/shipments");
    expect(other).not.toContain("onload=alert");
    expect(other).toContain("No followed shipments yet.");
    expect(bobKey).toStartWith("ctk_");
  });

  test("shows each follow's reference and searches it (or the AWB) exactly; a search nothing can match lists nothing; text is escaped", async () => {
    const alice_ = await accountId(aliceEmail);
    const add = async (n: string, reference: string | null) => {
      const id = newId("shp");
      await ctx.tdb.db
        .insert(shipments)
        .values({ id, courier: "delhivery", trackingNumber: n, state: "pending", followers: 1 });
      await ctx.tdb.db.insert(follows).values({ accountId: alice_, shipmentId: id, reference });
    };
    await add("7700000000011", "ORD-<b>77</b>");
    await add("7700000000021", "ORD-78");
    await add("7700000000031", null);
    const [, all] = await alice.get("/dashboard/shipments");
    expect(all).toContain("ORD-&lt;b&gt;77&lt;/b&gt;");
    expect(all).toContain("ORD-78");
    expect(all).toContain('name="q"');
    const [res, found] = await alice.get(`/dashboard/shipments?q=${encodeURIComponent("ORD-<b>77</b>")}`);
    expect(res.status).toBe(200);
    expect(found).toContain("7700000000011");
    expect(found).not.toContain("7700000000021");
    expect(found).toContain('value="ORD-&lt;b&gt;77&lt;/b&gt;"');
    const [, none] = await alice.get("/dashboard/shipments?q=ord-78");
    expect(none).toContain("No followed shipment matches these filters.");
    const [, byAwb] = await alice.get("/dashboard/shipments?q=7700-0000-00021");
    expect(byAwb).toContain("ORD-78");
    expect(byAwb).not.toContain("7700000000011");
    const [bad, badHtml] = await alice.get(`/dashboard/shipments?q=${encodeURIComponent("x\u0000y")}`);
    expect(bad.status).toBe(200);
    expect(badHtml).toContain("No followed shipment matches these filters.");
    const [long, longHtml] = await alice.get(`/dashboard/shipments?q=${"r".repeat(5000)}`);
    expect(long.status).toBe(200);
    expect(longHtml).not.toContain("r".repeat(300));
    const [, bobs] = await bob.get("/dashboard/shipments?q=ORD-78");
    expect(bobs).not.toContain("7700000000021");
  });
});
