/** Dashboard webhook pages: CRUD, secret reveal and rotation, test fire, deliveries, chart, reactivation, isolation (docs/dashboard.md). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, deliveries, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, inlineScripts, startReceiver, webhookEnv } from "./support.ts";

let ctx: TestContext;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let alice: Client;
let bob: Client;
const aliceEmail = `wh-alice-${Bun.randomUUIDv7().slice(-6)}@example.com`;
const XSS = `<script>alert("x")</script>`;

const accountId = async (email: string) =>
  (await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email)))[0]!.id;
const whId = (location: string | null) => /\/dashboard\/webhooks\/(wh_[0-9a-f]{32})/.exec(location ?? "")![1]!;

beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver(() => new Response(`<b>thanks</b>${XSS}`, { status: 200 }));
  alice = new Client(ctx.app);
  bob = new Client(ctx.app);
  await alice.signUp(aliceEmail);
  await bob.signUp(`wh-bob-${Bun.randomUUIDv7().slice(-6)}@example.com`);
});
afterAll(async () => {
  rx.stop();
  await ctx.close();
});

async function create(c: Client, fields: Record<string, string | string[]>) {
  return c.post("/dashboard/webhooks", { _csrf: await c.csrf("/dashboard/webhooks/new"), ...fields });
}

let testHook: string;

describe("create, list, edit, delete", () => {
  test("the first create reveals the signing secret once; later creates do not; the description is escaped everywhere", async () => {
    const [res, html] = await create(alice, {
      url: rx.url(),
      events: ["tracking.delivered", "tracking.exception"],
      mode: "test",
      description: XSS,
    });
    expect(res.status).toBe(201);
    expect(html).toMatch(/value="whsec_[A-Za-z0-9+/]{43}="/);
    expect(html).toContain('data-copy="secret"');
    testHook = /href="\/dashboard\/webhooks\/(wh_[0-9a-f]{32})"/.exec(html)![1]!;

    const [again] = await create(alice, { url: rx.url("/second"), events: "tracking.updated", mode: "test" });
    expect(again.status).toBe(303);
    const second = whId(again.headers.get("location"));
    const [, detail] = await alice.get(`/dashboard/webhooks/${second}?done=created`);
    expect(detail).not.toContain("whsec_");
    expect(detail).toContain("Webhook created.");

    for (const p of [
      "/dashboard/webhooks",
      `/dashboard/webhooks/${testHook}`,
      `/dashboard/webhooks/${testHook}/edit`,
    ]) {
      const [r, page] = await alice.get(p);
      expect(r.status).toBe(200);
      expect(page).not.toContain(XSS);
      expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
      expect(inlineScripts(page)).toBe(0);
    }
    const [, list] = await alice.get("/dashboard/webhooks");
    expect(list).toContain(`data-webhook-id="${testHook}"`);
    expect(list).toContain("tracking.delivered, tracking.exception");
    expect(list).toContain('<td data-label="Failures in a row" data-testid="failure-count">0</td>');
  });

  test("the API's schema and URL rules validate the form, with field messages", async () => {
    const [r1, h1] = await create(alice, { url: "http://example.com/x", mode: "test" });
    expect(r1.status).toBe(422);
    expect(h1).toContain("Choose at least one event.");
    const [r2, h2] = await create(alice, { url: "http://example.com/x", events: "tracking.updated", mode: "test" });
    expect(r2.status).toBe(422);
    expect(h2).toContain("URL scheme should be &#39;https&#39;");
    const [r3, h3] = await create(alice, { url: "https://example.com/x", events: "tracking.nope", mode: "both" });
    expect(r3.status).toBe(422);
    expect(h3).toContain("Choose test or live.");
    expect(h3).toContain('value="https://example.com/x"'); // the form keeps what was typed
  });

  test("a live webhook on Free is refused with the upgrade hint", async () => {
    const [res, html] = await create(alice, {
      url: "https://example.com/live",
      events: "tracking.delivered",
      mode: "live",
    });
    expect(res.status).toBe(422);
    expect(html).toContain("Live webhooks need a plan that includes them");
  });

  test("edit saves through the service; delete needs the confirmation form", async () => {
    const [made] = await create(alice, { url: rx.url("/edit-me"), events: "tracking.updated", mode: "test" });
    const id = whId(made.headers.get("location"));
    const [saved] = await alice.post(`/dashboard/webhooks/${id}`, {
      _csrf: await alice.csrf(`/dashboard/webhooks/${id}/edit`),
      url: rx.url("/edited"),
      events: ["tracking.updated", "tracking.delivered"],
      mode: "test",
      description: "edited",
    });
    expect(saved.status).toBe(303);
    const [row] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row!.url).toBe(rx.url("/edited"));
    expect(row!.events).toEqual(["tracking.updated", "tracking.delivered"]);
    expect(row!.description).toBe("edited");

    const [confirm, page] = await alice.get(`/dashboard/webhooks/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(page).toContain("Delete this webhook?");
    expect((await alice.post(`/dashboard/webhooks/${id}/delete`, {}))[0].status).toBe(403);
    const [del] = await alice.post(`/dashboard/webhooks/${id}/delete`, {
      _csrf: await alice.csrf(`/dashboard/webhooks/${id}/delete`),
    });
    expect(del.headers.get("location")).toBe("/dashboard/webhooks?done=deleted");
    expect(await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id))).toHaveLength(0);
  });

  test("courier health events can be chosen, and the edit form shows them checked so saving keeps them", async () => {
    const [made] = await create(alice, {
      url: rx.url("/courier"),
      events: ["courier.down", "courier.recovered"],
      mode: "test",
    });
    expect(made.status).toBe(303);
    const id = whId(made.headers.get("location"));
    const [row] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row!.events).toEqual(["courier.down", "courier.recovered"]);
    const [, form] = await alice.get(`/dashboard/webhooks/${id}/edit`);
    expect(form).toContain('value="courier.down" checked');
    expect(form).toContain('value="courier.degraded">');
  });

  test("rotate secret: a confirmation page, then the new secret once", async () => {
    const [confirm, page] = await alice.get("/dashboard/webhooks/rotate-secret");
    expect(confirm.status).toBe(200);
    expect(page).toContain("Rotate the signing secret?");
    const before = (await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, aliceEmail)))[0]!
      .webhookSecretEnc;
    expect((await alice.post("/dashboard/webhooks/rotate-secret", { _csrf: "nope" }))[0].status).toBe(403);
    const [res, html] = await alice.post("/dashboard/webhooks/rotate-secret", {
      _csrf: await alice.csrf("/dashboard/webhooks/rotate-secret"),
    });
    expect(res.status).toBe(200);
    expect(html).toMatch(/value="whsec_[A-Za-z0-9+/]{43}="/);
    expect(html).toContain("accept both secrets for at least 15 minutes");
    const after = (await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, aliceEmail)))[0]!.webhookSecretEnc;
    expect(after).not.toBe(before);
  });
});

describe("test fire, deliveries and chart", () => {
  test("test fire reaches the receiver; the delivery, its attempt and the chart show it; the response snippet is escaped", async () => {
    const [res] = await alice.post(`/dashboard/webhooks/${testHook}/test`, {
      _csrf: await alice.csrf(`/dashboard/webhooks/${testHook}`),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(
      new RegExp(`^/dashboard/webhooks/${testHook}\\?fired=ok&code=200&ms=\\d+$`),
    );
    expect(rx.hits.filter((h) => h.path === "/hook")).toHaveLength(1);
    expect(rx.hits[0]!.headers["x-webhook-mode"]).toBe("test");

    const [, html] = await alice.get(res.headers.get("location")!);
    expect(html).toContain("Test delivery delivered with HTTP 200");
    expect(html).toMatch(/<tr data-delivery-id="dlv_[0-9a-f]{32}">/);
    expect(html).toContain("<code>tracking.delivered</code>");
    expect(html).toContain("HTTP 200");
    expect(html).toMatch(/\d+ ms<\/td>/);
    expect(html).toContain("&lt;b&gt;thanks&lt;/b&gt;&lt;script&gt;");
    expect(html).not.toContain(XSS);
    expect(html).toContain("Deliveries per day, last 14 days: 1 delivered, 0 failed");
    expect(html).toContain('<tr><th scope="row">2026-11-05</th><td>1</td><td>0</td></tr>');
  });

  test("shows at most the last 50 deliveries; the chart counts failures per UTC day", async () => {
    const acc = await accountId(aliceEmail);
    const day = (d: number) => new Date(Date.UTC(2026, 10, d, 12));
    const rows = Array.from({ length: 60 }, (_, i) => ({
      id: newId("dlv"),
      webhookId: testHook,
      accountId: acc,
      eventType: "tracking.updated",
      mode: "test",
      state: i % 3 === 0 ? "abandoned" : "delivered",
      attempts: i % 3 === 0 ? 6 : 1,
      enqueuedAt: day(1 + (i % 4)),
      lastStatusCode: i % 3 === 0 ? 500 : 204,
    }));
    await ctx.tdb.db.insert(deliveries).values(rows);
    // A delivery older than 14 days is not in the chart.
    await ctx.tdb.db.insert(deliveries).values({
      id: newId("dlv"),
      webhookId: testHook,
      accountId: acc,
      eventType: "tracking.updated",
      mode: "test",
      state: "delivered",
      enqueuedAt: new Date(Date.UTC(2026, 9, 1)),
    });
    const [, html] = await alice.get(`/dashboard/webhooks/${testHook}`);
    expect([...html.matchAll(/<tr data-delivery-id=/g)]).toHaveLength(50);
    expect(html).toContain("The last 50 deliveries, newest first.");
    expect(html).toContain("Deliveries per day, last 14 days: 41 delivered, 20 failed");
    expect(html).toContain('<tr><th scope="row">2026-11-01</th><td>10</td><td>5</td></tr>');
    expect(html).toContain('class="bar-bad"');
  });

  test("a test fire at a live webhook is refused with 409", async () => {
    const c = new Client(ctx.app);
    const email = `live-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    await c.signUp(email);
    expect(
      (await c.post("/dashboard/billing", { _csrf: await c.csrf("/dashboard/billing"), plan: "growth" }))[0].status,
    ).toBe(303);
    const [made, reveal] = await create(c, { url: rx.url("/live"), events: "tracking.delivered", mode: "live" });
    expect(made.status).toBe(201);
    const id = /href="\/dashboard\/webhooks\/(wh_[0-9a-f]{32})"/.exec(reveal)![1]!;
    const [, detail] = await c.get(`/dashboard/webhooks/${id}`);
    expect(detail).not.toContain("Send a test delivery");
    const [res, html] = await c.post(`/dashboard/webhooks/${id}/test`, { _csrf: await c.csrf() });
    expect(res.status).toBe(409);
    expect(html).toContain("Test fires go to test webhooks only");
  });
});

describe("reactivation", () => {
  test("a webhook deactivated by failures shows its failure count and a Reactivate button that resets it", async () => {
    await ctx.tdb.db.update(webhooks).set({ status: "deactivated", failureCount: 20 }).where(eq(webhooks.id, testHook));
    const [, list] = await alice.get("/dashboard/webhooks");
    expect(list).toContain('<td data-label="Failures in a row" data-testid="failure-count">20 (deactivated)</td>');
    expect(list).toContain("deactivated");
    const [, overview] = await alice.get("/dashboard");
    expect(overview).toContain("1 deactivated");
    const [, detail] = await alice.get(`/dashboard/webhooks/${testHook}`);
    expect(detail).toContain("Reactivate");
    expect((await alice.post(`/dashboard/webhooks/${testHook}/reactivate`, {}))[0].status).toBe(403);
    const [res] = await alice.post(`/dashboard/webhooks/${testHook}/reactivate`, { _csrf: await alice.csrf() });
    expect(res.headers.get("location")).toBe(`/dashboard/webhooks/${testHook}?done=reactivated`);
    const [row] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, testHook));
    expect(row).toMatchObject({ status: "active", failureCount: 0 });
  });
});

describe("isolation between accounts", () => {
  test("another account can neither see nor change a webhook, its deliveries or its secret", async () => {
    await ctx.tdb.db.update(webhooks).set({ status: "deactivated", failureCount: 20 }).where(eq(webhooks.id, testHook));
    const [, list] = await bob.get("/dashboard/webhooks");
    expect(list).not.toContain(testHook);
    for (const p of [
      `/dashboard/webhooks/${testHook}`,
      `/dashboard/webhooks/${testHook}/edit`,
      `/dashboard/webhooks/${testHook}/delete`,
    ]) {
      const [res, html] = await bob.get(p);
      expect(res.status).toBe(404);
      expect(html).not.toContain(rx.url());
    }
    const csrf = await bob.csrf();
    const hitsBefore = rx.hits.length;
    for (const [p, f] of [
      [`/dashboard/webhooks/${testHook}`, { url: "https://evil.example/x", events: "tracking.updated", mode: "test" }],
      [`/dashboard/webhooks/${testHook}/delete`, {}],
      [`/dashboard/webhooks/${testHook}/test`, {}],
      [`/dashboard/webhooks/${testHook}/reactivate`, {}],
    ] as [string, Record<string, string>][]) {
      const [res] = await bob.post(p, { _csrf: csrf, ...f });
      expect(res.status).toBe(404);
    }
    expect(rx.hits.length).toBe(hitsBefore);
    const [row] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, testHook));
    expect(row).toMatchObject({ url: rx.url(), status: "deactivated", failureCount: 20 });
    // Garbage ids are a plain 404 too.
    expect((await bob.get("/dashboard/webhooks/wh_nope"))[0].status).toBe(404);
  });
});
