/**
 * Billing that cannot be cheated, `sandbox` and `manual` providers
 * (docs/billing.md): which provider the configuration picks, the sandbox
 * label, and a free account that cannot reach a paid plan from the
 * dashboard until an operator approves its request.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import { approveRequest, listRequests, rejectRequest } from "../../src/modules/billing/requests.ts";
import { csrfOf } from "../dashboard/support.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { planOf, signedInAccount, trackQuota } from "./support.ts";

describe("BILLING_PROVIDER", () => {
  const stripe = {
    BILLING_PROVIDER: "stripe",
    STRIPE_SECRET_KEY: "sk_test_x",
    STRIPE_WEBHOOK_SECRET: "whsec_x",
    STRIPE_PRICE_GROWTH: "price_g",
  };
  test("default: sandbox only with sandbox couriers and the embedded database; manual otherwise", () => {
    expect(loadConfig({}).billing.provider).toBe("sandbox");
    expect(loadConfig({ DATABASE_URL: "postgres://db.example/x" }).billing.provider).toBe("manual");
    expect(loadConfig({ COURIER_MODE: "live" }).billing.provider).toBe("manual");
    expect(loadConfig({ DHL_API_KEY: "k" }).billing.provider).toBe("manual"); // credentials imply live couriers
  });
  test("sandbox set explicitly with live couriers is a configuration error", () => {
    expect(() => loadConfig({ COURIER_MODE: "live", BILLING_PROVIDER: "sandbox" })).toThrow(ConfigError);
    expect(() => loadConfig({ COURIER_MODE: "live", BILLING_PROVIDER: "sandbox" })).toThrow(/BILLING_PROVIDER/);
    // With DATABASE_URL couriers are live unless COURIER_MODE=sandbox says otherwise (docs/deployment.md).
    expect(() => loadConfig({ DATABASE_URL: "postgres://db.example/x", BILLING_PROVIDER: "sandbox" })).toThrow(
      /BILLING_PROVIDER/,
    );
    expect(
      loadConfig({ DATABASE_URL: "postgres://db.example/x", COURIER_MODE: "sandbox", BILLING_PROVIDER: "sandbox" })
        .billing.provider,
    ).toBe("sandbox");
  });
  test("stripe needs its secret key, webhook secret and at least one price", () => {
    expect(loadConfig(stripe).billing).toMatchObject({
      provider: "stripe",
      prices: { growth: "price_g" },
      apiBase: undefined,
    });
    for (const missing of ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_PRICE_GROWTH"]) {
      const env: Record<string, string> = { ...stripe };
      delete env[missing];
      expect(() => loadConfig(env)).toThrow(ConfigError);
    }
    expect(() => loadConfig({ ...stripe, STRIPE_SECRET_KEY: "pk_test_public" })).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ ...stripe, STRIPE_PRICE_BUSINESS: "price_g" })).toThrow(/different prices/);
    expect(() => loadConfig({ ...stripe, BILLING_PROVIDER: "paypal" })).toThrow(/BILLING_PROVIDER/);
  });
});

describe("sandbox provider", () => {
  let ctx: TestContext;
  beforeAll(async () => (ctx = await testContext()));
  afterAll(() => ctx.close());

  test("the billing page says sandbox", async () => {
    const { c } = await signedInAccount(ctx);
    const [, html] = await c.get("/dashboard/billing");
    expect(html).toContain('<span class="badge" data-testid="billing-provider">Sandbox</span>');
    expect(html).toContain("no payment is taken");
  });
});

describe("manual provider", () => {
  let ctx: TestContext;
  // DATABASE_URL set (here only in the configuration; the test database is passed in): manual by default.
  beforeAll(async () => (ctx = await testContext({ DATABASE_URL: "postgres://db.example/courier" })));
  afterAll(() => ctx.close());

  test("a free account's upgrade is only a request: plan and quota stay free until an operator approves", async () => {
    const a = await signedInAccount(ctx);
    expect(ctx.config.billing.provider).toBe("manual");
    const [, page0] = await a.c.get("/dashboard/billing");
    expect(page0).toContain('data-testid="billing-provider">Manual approval</span>');
    expect(page0).toContain("Request Business");

    const [res] = await a.c.post("/dashboard/billing", { _csrf: csrfOf(page0), plan: "business" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/billing?done=plan-requested");
    expect(await planOf(ctx, a.id)).toBe("free");
    expect(await trackQuota(ctx, a.key)).toBe(100);

    const [, page] = await a.c.get("/dashboard/billing?done=plan-requested");
    expect(page).toContain("Your request is recorded");
    expect(page).toMatch(/data-testid="pending-request">You asked to move to <strong>Business<\/strong>/);
    expect(page).toContain('<dd data-testid="plan-name">Free</dd>');

    // A second request supersedes the first: one pending request per account.
    await a.c.post("/dashboard/billing", { _csrf: csrfOf(page), plan: "growth" });
    const pending = (await listRequests(ctx.tdb.db, "pending")).filter((r) => r.request.accountId === a.id);
    expect(pending.map((r) => r.request.toPlan)).toEqual(["growth"]);
    expect(await planOf(ctx, a.id)).toBe("free");

    await approveRequest(ctx.tdb.db, pending[0]!.request.id);
    expect(await planOf(ctx, a.id)).toBe("growth");
    expect(await trackQuota(ctx, a.key)).toBe(150_000);
    const [, after] = await a.c.get("/dashboard/billing");
    expect(after).toContain('<dd data-testid="plan-name">Growth</dd>');
    expect(after).not.toContain('data-testid="pending-request"');
  });

  test("a rejected request leaves the plan and tells the customer why", async () => {
    const a = await signedInAccount(ctx);
    await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "pro" });
    const [r] = (await listRequests(ctx.tdb.db, "pending")).filter((x) => x.request.accountId === a.id);
    await rejectRequest(ctx.tdb.db, r!.request.id, "please pay the open invoice first");
    expect(await planOf(ctx, a.id)).toBe("free");
    const [, html] = await a.c.get("/dashboard/billing");
    expect(html).toContain("Your request to move to Pro was declined: please pay the open invoice first.");
  });

  test("a forged form (no CSRF token) records nothing", async () => {
    const a = await signedInAccount(ctx);
    expect((await a.c.post("/dashboard/billing", { plan: "business" }))[0].status).toBe(403);
    expect((await listRequests(ctx.tdb.db, undefined)).filter((x) => x.request.accountId === a.id)).toHaveLength(0);
  });
});
