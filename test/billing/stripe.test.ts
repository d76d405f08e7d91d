/**
 * The `stripe` billing provider end to end (docs/billing.md): the official
 * SDK talks HTTPS to a loopback Stripe twin (test/billing/stripe-twin.ts),
 * and the twin delivers signed events over HTTPS to the app listening on
 * 127.0.0.1. The plan changes only when a correctly signed event arrives.
 *
 * NETWORK SAFETY: the app and the twin listen on 127.0.0.1 only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import Stripe from "stripe";
import { stripeEvents } from "../../src/db/schema/index.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { setPlan } from "../../src/modules/accounts/service.ts";
import { testCert } from "../dashboard/support.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import {
  startStripeTwin,
  stripeSignature,
  TWIN_PRICES,
  TWIN_SECRET_KEY,
  TWIN_WEBHOOK_SECRET,
  type StripeTwin,
} from "./stripe-twin.ts";
import { planOf, signedInAccount, trackQuota } from "./support.ts";

let ctx: TestContext;
let twin: StripeTwin;
let hook: string;
/** One clock for the app and the twin (the app's `deps.clock`; `ctx.clock` is not it). */
const clock = new FakeClock();
const T = 30_000;

beforeAll(async () => {
  const cert = await testCert();
  twin = await startStripeTwin({ clock, cert: cert.cert, key: cert.key });
  ctx = await testContext(
    {
      BILLING_PROVIDER: "stripe",
      STRIPE_SECRET_KEY: TWIN_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: TWIN_WEBHOOK_SECRET,
      STRIPE_PRICE_STARTER: TWIN_PRICES.starter,
      STRIPE_PRICE_GROWTH: TWIN_PRICES.growth,
      STRIPE_PRICE_BUSINESS: TWIN_PRICES.business,
      STRIPE_API_BASE: twin.url,
      STRIPE_API_CA_FILE: cert.caFile,
    },
    { clock },
  );
  ctx.app.listen({ port: 0, hostname: "127.0.0.1", tls: { cert: cert.cert, key: cert.key } });
  hook = `https://127.0.0.1:${ctx.app.server!.port}/billing/stripe/webhook`;
  twin.setEndpoint(hook);
});

afterAll(async () => {
  await ctx.app.stop(true);
  twin.stop();
  await ctx.close();
});

const eventRows = async (id: string) =>
  (await ctx.tdb.db.select().from(stripeEvents).where(eq(stripeEvents.id, id))).length;

/** Signs up, upgrades to `plan` through Checkout, pays on the twin and lets its events arrive. */
async function subscribed(plan: "growth" | "business" | "starter") {
  const a = await signedInAccount(ctx);
  const [res, html] = await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan });
  expect(res.status).toBe(200);
  const url = /href="([^"]+)" data-testid="checkout-link"/.exec(html)?.[1];
  const session = [...twin.sessions.values()].find((s) => s.client_reference_id === a.id)!;
  expect(url).toBe(session.url);
  const sub = twin.completeCheckout(session.id);
  const delivered = await twin.flush();
  return { ...a, sub, session, delivered };
}

describe("signing", () => {
  test("the twin signs as Stripe does: its node:crypto HMAC equals the SDK's test header, and the SDK verifies it", async () => {
    const payload = JSON.stringify({ id: "evt_1", object: "event" });
    const t = 1_800_000_000;
    const ours = stripeSignature(payload, TWIN_WEBHOOK_SECRET, t);
    const sdk = new Stripe(TWIN_SECRET_KEY);
    expect(
      await sdk.webhooks.generateTestHeaderStringAsync({ payload, secret: TWIN_WEBHOOK_SECRET, timestamp: t }),
    ).toBe(ours);
    expect(ours).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    const ev = await sdk.webhooks.constructEventAsync(payload, ours, TWIN_WEBHOOK_SECRET, 300, undefined, t * 1000);
    expect(ev.id).toBe("evt_1");
  });
});

describe("checkout", () => {
  test(
    "a free account's upgrade opens Checkout; the plan changes only when Stripe's signed event arrives",
    async () => {
      const a = await signedInAccount(ctx);
      const [, page] = await a.c.get("/dashboard/billing");
      expect(page).toContain('data-testid="billing-provider">Stripe</span>');
      expect(page).not.toContain('data-testid="plan-pro"'); // no STRIPE_PRICE_PRO: not offered
      const [res, html] = await a.c.post("/dashboard/billing", {
        _csrf: await a.c.csrf("/dashboard/billing"),
        plan: "business",
      });
      expect(res.status).toBe(200);
      expect(html).toContain("Continue to Stripe Checkout");

      // The SDK called the twin in Stripe's wire format.
      const call = twin.requests.findLast((r) => r.path === "/v1/checkout/sessions")!;
      expect(call.form).toMatchObject({
        mode: "subscription",
        line_items: [{ price: TWIN_PRICES.business, quantity: "1" }],
        client_reference_id: a.id,
        customer_email: a.email,
        metadata: { account_id: a.id, plan: "business" },
        subscription_data: { metadata: { account_id: a.id, plan: "business" } },
        success_url: "https://localhost:8443/dashboard/billing?done=checkout-complete",
      });

      // Coming back to the success URL changes nothing: it is not a confirmation.
      const [, back] = await a.c.get("/dashboard/billing?done=checkout-complete");
      expect(back).toContain("Your plan changes as soon as Stripe confirms the payment");
      expect(await planOf(ctx, a.id)).toBe("free");
      expect(await trackQuota(ctx, a.key)).toBe(100);

      const session = [...twin.sessions.values()].find((s) => s.client_reference_id === a.id)!;
      twin.completeCheckout(session.id);
      const delivered = await twin.flush();
      expect(delivered.map((d) => [d.type, d.status])).toEqual([
        ["checkout.session.completed", 200],
        ["customer.subscription.created", 200],
      ]);
      expect(await planOf(ctx, a.id)).toBe("business");
      expect(await trackQuota(ctx, a.key)).toBe(500_000);
    },
    T,
  );

  test("a plan without a configured price cannot be chosen", async () => {
    const a = await signedInAccount(ctx);
    const [res] = await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "pro" });
    expect(res.status).toBe(422);
    expect(await planOf(ctx, a.id)).toBe("free");
  });
});

describe("webhook authenticity", () => {
  test(
    "a missing, wrong, tampered or stale signature is 400 and changes nothing",
    async () => {
      const a = await signedInAccount(ctx);
      const forged = JSON.stringify({
        id: "evt_forged_1",
        object: "event",
        type: "checkout.session.completed",
        created: Math.floor(clock.now() / 1000),
        api_version: "2026-10-28.endive",
        livemode: false,
        data: {
          object: {
            id: "cs_forged",
            object: "checkout.session",
            mode: "subscription",
            payment_status: "paid",
            status: "complete",
            client_reference_id: a.id,
            metadata: { account_id: a.id, plan: "business" },
            customer: "cus_x",
            subscription: "sub_x",
          },
        },
      });
      const now = Math.floor(clock.now() / 1000);
      const cases: [string | undefined, string][] = [
        [undefined, forged],
        [stripeSignature(forged, "whsec_attackerGuess000000000000000", now), forged],
        [stripeSignature(forged.replace("business", "starter"), TWIN_WEBHOOK_SECRET, now), forged],
        [stripeSignature(forged, TWIN_WEBHOOK_SECRET, now - 301), forged],
        ["t=abc,v1=zz", forged],
      ];
      for (const [sig, body] of cases) {
        const res = await ctx.app.handle(
          new Request("http://localhost/billing/stripe/webhook", {
            method: "POST",
            body,
            headers: { "content-type": "application/json", ...(sig ? { "stripe-signature": sig } : {}) },
          }),
        );
        expect(res.status).toBe(400);
        expect(res.headers.get("x-request-id")).toMatch(/^req_/);
        expect((await res.json()).error.code).toBe("BAD_REQUEST");
      }
      // Over the real socket too.
      expect(await twin.deliver(forged, stripeSignature(forged, "whsec_attackerGuess000000000000000", now))).toBe(400);
      expect(await planOf(ctx, a.id)).toBe("free");
      expect(await eventRows("evt_forged_1")).toBe(0);
      // The same bytes with the right signature would have been applied: the refusals above were about the signature.
      expect(await twin.deliver(forged)).toBe(200);
      expect(await planOf(ctx, a.id)).toBe("business");
    },
    T,
  );

  test("a body over 64 KiB is 413 without being read whole; the route answers POST only", async () => {
    const big = "x".repeat(70 * 1024);
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await ctx.app.handle(
      new Request("http://localhost/billing/stripe/webhook", {
        method: "POST",
        body: chunked,
        headers: { "stripe-signature": "t=1,v1=00" },
      }),
    );
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await ctx.app.handle(new Request("http://localhost/billing/stripe/webhook"))).status).toBe(404);
  });
});

describe("the webhook's door", () => {
  test("with Stripe configured, every other request is still answered without a promise (the door reads as synchronous)", async () => {
    const a = await ctx.account("free");
    await ctx.call("/v1/couriers", { key: a.key }); // the key's first lookup waits for the database; later ones are cached
    for (const [path, key] of [
      ["/billing/plans", undefined],
      ["/v1/couriers", a.key],
    ] as const) {
      const answer = ctx.app.fetch(
        new Request(`http://localhost${path}`, { headers: key ? { "x-api-key": key } : {} }),
      );
      expect([path, answer instanceof Response]).toEqual([path, true]);
      expect((answer as Response).headers.get("x-request-id")).toMatch(/^req_/);
    }
    // The webhook's own POST is the one that waits.
    const posted = ctx.app.fetch(
      new Request("http://localhost/billing/stripe/webhook", {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json" },
      }),
    );
    expect(posted).toBeInstanceOf(Promise);
    expect((await posted).status).toBe(400);
  });
});

describe("idempotency and the period end", () => {
  test(
    "a replayed event id has no second effect",
    async () => {
      const a = await subscribed("growth");
      expect(await planOf(ctx, a.id)).toBe("growth");
      const checkoutEvent = a.delivered.find((d) => d.type === "checkout.session.completed")!;
      // The operator moves the account by hand; replaying the old purchase must not undo that.
      await setPlan(ctx.tdb.db, a.id, "starter");
      expect(await twin.resend(checkoutEvent.id)).toBe(200);
      expect(await twin.resend(checkoutEvent.id)).toBe(200);
      expect(await planOf(ctx, a.id)).toBe("starter");
      expect(await eventRows(checkoutEvent.id)).toBe(1);
    },
    T,
  );

  test(
    "a cancellation keeps the paid plan to the period end, then subscription.deleted moves the account to Free",
    async () => {
      const a = await subscribed("growth");
      const [res] = await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "free" });
      expect(res.headers.get("location")).toBe("/dashboard/billing?done=plan-submitted");
      expect(twin.subscriptions.get(a.sub.id)!.cancel_at_period_end).toBe(true);
      expect((await twin.flush()).map((d) => [d.type, d.status])).toEqual([["customer.subscription.updated", 200]]);

      expect(await planOf(ctx, a.id)).toBe("growth");
      const [, page] = await a.c.get("/dashboard/billing");
      const end = new Date(a.sub.items.data[0].current_period_end * 1000).toISOString().slice(0, 16).replace("T", " ");
      expect(page).toContain(`data-testid="scheduled-change">Your plan changes to <strong>Free</strong> on ${end} UTC`);

      clock.set(a.sub.items.data[0].current_period_end * 1000);
      twin.endPeriod(a.sub.id);
      const deleted = await twin.flush();
      expect(deleted.map((d) => [d.type, d.status])).toEqual([["customer.subscription.deleted", 200]]);
      expect(await planOf(ctx, a.id)).toBe("free");
      expect(await trackQuota(ctx, a.key)).toBe(100);
      const [, after] = await a.c.get("/dashboard/billing");
      expect(after).not.toContain('data-testid="scheduled-change"');

      // Replaying the purchase after the end gives nothing back.
      expect(await twin.resend(a.delivered[0]!.id)).toBe(200);
      expect(await planOf(ctx, a.id)).toBe("free");
    },
    T,
  );

  test(
    "an upgrade applies on Stripe's event; a downgrade to a cheaper plan waits for the renewal",
    async () => {
      const a = await subscribed("growth");
      await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "business" });
      const up = twin.requests.findLast((r) => r.path === `/v1/subscriptions/${a.sub.id}` && r.method === "POST")!;
      expect(up.form).toMatchObject({
        items: [{ price: TWIN_PRICES.business }],
        proration_behavior: "always_invoice",
        payment_behavior: "pending_if_incomplete",
      });
      expect(await planOf(ctx, a.id)).toBe("growth"); // not before Stripe says so
      await twin.flush();
      expect(await planOf(ctx, a.id)).toBe("business");

      await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "starter" });
      await twin.flush();
      expect(await planOf(ctx, a.id)).toBe("business");
      expect((await a.c.get("/dashboard/billing"))[1]).toContain(
        'data-testid="scheduled-change">Your plan changes to <strong>Starter</strong>',
      );

      clock.set(a.sub.items.data[0].current_period_end * 1000);
      twin.endPeriod(a.sub.id);
      expect((await twin.flush()).map((d) => d.status)).toEqual([200]);
      expect(await planOf(ctx, a.id)).toBe("starter");
    },
    T,
  );

  test(
    "a late, older subscription event does not undo a newer one",
    async () => {
      const a = await subscribed("growth");
      await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "business" });
      const [older] = twin.queue.splice(0);
      clock.advance(60_000);
      // Stripe sends the cancellation first; the upgrade event (created earlier) arrives after it.
      await a.c.post("/dashboard/billing", { _csrf: await a.c.csrf("/dashboard/billing"), plan: "free" });
      await twin.flush();
      twin.queue.push(older!);
      await twin.flush();
      const [, page] = await a.c.get("/dashboard/billing");
      expect(page).toContain('data-testid="scheduled-change">Your plan changes to <strong>Free</strong>');
    },
    T,
  );
});
