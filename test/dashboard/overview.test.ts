/**
 * The overview page (docs/dashboard.md, "Overview") from real data: usage against the quota with the month-end
 * projection, delivery success over 7 and 30 days across all webhooks with the failing ones listed, and followed
 * shipments by state linking to the list. Driven through `app.handle` on a real database; the clock is the
 * FakeClock (2026-11-05 10:00 UTC: 106 hours into a 720-hour month).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, deliveries } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { projectedMonthEnd } from "../../src/modules/dashboard/overview.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { seedRealistic, type Seeded } from "./layout-seed.ts";
import { Client } from "./support.ts";

let ctx: TestContext;
let merchant: Client;
let other: Client;
let seeded: Seeded;
let accountId: string;
const email = `overview-${Bun.randomUUIDv7().slice(-6)}@example.com`;

beforeAll(async () => {
  ctx = await testContext();
  merchant = new Client(ctx.app);
  other = new Client(ctx.app);
  await merchant.signUp(email);
  await other.signUp(`other-${Bun.randomUUIDv7().slice(-6)}@example.com`);
  const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email));
  accountId = acc!.id;
  seeded = await seedRealistic(ctx, accountId); // uses 10,600 requests this month
});

afterAll(() => ctx?.close());

const text = (html: string, testid: string) => new RegExp(`data-testid="${testid}"[^>]*>([^<]*)<`).exec(html)?.[1];

describe("overview", () => {
  test("usage: used so far and the month-end projection at this pace, against the quota, as an SVG with a text alternative", async () => {
    const [res, html] = await merchant.get("/dashboard");
    expect(res.status).toBe(200);
    expect(text(html, "usage-projected")).toBe("72,000"); // 10,600 × 720 h / 106 h
    expect(html).toContain(
      '<title id="usage-chart-title">Used 10,600, projected 72,000 by month end, quota 150,000</title>',
    );
    expect(html).not.toContain("over the quota");
    expect(projectedMonthEnd(10_600, Date.UTC(2026, 10, 30, 12))).toBe(10_780); // 10,600 × 720 h / 708 h: near the end the projection nears the use
    expect(projectedMonthEnd(0, Date.UTC(2026, 10, 1, 0, 1))).toBe(0);
  });

  test("deliveries: success over 7 and 30 days across all webhooks; the failing ones are listed", async () => {
    const [, before] = await merchant.get("/dashboard");
    expect(text(before, "success-7")).toBe("0% delivered (0 delivered, 5 failed)");
    const hook = seeded.hooks[2]!;
    const at = (daysAgo: number) => new Date(ctx.clock.now() - daysAgo * 86_400_000);
    const row = (state: string, daysAgo: number) => ({
      id: newId("dlv"),
      webhookId: hook,
      accountId,
      eventType: "tracking.delivered",
      mode: "test",
      state,
      attempts: 1,
      enqueuedAt: at(daysAgo),
    });
    await ctx.tdb.db
      .insert(deliveries)
      .values([
        ...Array.from({ length: 15 }, () => row("delivered", 1)),
        row("delivered", 20),
        row("abandoned", 20),
        row("pending", 1),
        row("delivered", 40),
      ]);
    const [, html] = await merchant.get("/dashboard");
    expect(text(html, "success-7")).toBe("75% delivered (15 delivered, 5 failed)");
    expect(text(html, "success-30")).toBe("72.7% delivered (16 delivered, 6 failed)");
    const failing = /data-testid="failing-webhooks">([\s\S]*?)<\/ul>/.exec(html)![1]!;
    expect(failing).toContain(`/dashboard/webhooks/${seeded.busy}`);
    expect(failing).not.toContain(`/dashboard/webhooks/${hook}`); // its one failure is 20 days old
    // The same deliveries by UTC day: the chart's title, its bars' titles and its table.
    expect(html).toContain(
      '<title id="success-chart-title">Webhook delivery success by day, last 30 days: 72.7% delivered (16 delivered, 6 failed)</title>',
    );
    expect(html).toContain("<title>2026-10-16: 50% delivered (1 delivered, 1 failed)</title>");
    const days = [
      .../data-testid="success-days">([\s\S]*?)<\/table>/
        .exec(html)![1]!
        .matchAll(/<th scope="row">([0-9-]+)<\/th><td[^>]*>(\d+)<\/td><td[^>]*>(\d+)<\/td><td[^>]*>([^<]+)<\/td>/g),
    ].map((m) => [m[1], m[2], m[3], m[4]]);
    expect(days).toHaveLength(30);
    expect([days[0]![0], days[29]![0]]).toEqual(["2026-10-07", "2026-11-05"]);
    expect(days.filter((d) => d[3] !== "—")).toEqual([
      ["2026-10-16", "1", "1", "50%"],
      ["2026-11-04", "15", "0", "100%"],
      ["2026-11-05", "0", "5", "0%"],
    ]);
  });

  test("shipments by state link to the filtered list, which lists exactly those; another account sees none of it", async () => {
    const [, html] = await merchant.get("/dashboard");
    const section = /data-testid="shipment-states">([\s\S]*?)<\/ul>/.exec(html)![1]!;
    const states = [...section.matchAll(/href="\/dashboard\/shipments\?state=([a-z_]+)"><strong>(\d+)<\/strong>/g)].map(
      (m) => [m[1], Number(m[2])],
    );
    expect(states).toHaveLength(7);
    expect(states.reduce((a, [, n]) => a + (n as number), 0)).toBe(50);
    expect(states.slice(0, 2)).toEqual([
      ["pending", 8],
      ["cancelled", 7],
    ]);
    for (const [state, n] of states) {
      const [res, list] = await merchant.get(`/dashboard/shipments?state=${state}`);
      expect(res.status).toBe(200);
      const badges = [...list.matchAll(/<span class="badge state-([a-z_]+)">/g)].map((m) => m[1]);
      expect(badges).toEqual(Array(n as number).fill(state));
    }
    const [, theirs] = await other.get("/dashboard");
    expect(theirs).toContain("No followed shipments yet.");
    expect(text(theirs, "success-30")).toBe("no finished deliveries (0 delivered, 0 failed)");
    const [, theirList] = await other.get("/dashboard/shipments?state=pending");
    expect(theirList).toContain("No followed shipment matches these filters.");
  });

  test("usage by day from the quota's daily counter: lookups on two days, a bulk follow today; the chart, its table and the month agree", async () => {
    const viewer = new Client(ctx.app);
    const viewerEmail = `days-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    await viewer.signUp(viewerEmail);
    const [fresh] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, viewerEmail));
    const leases = ctx.deps.services.quotaLeases;
    const now = ctx.clock.now();
    for (let i = 0; i < 3; i++) expect((await leases.reserve(fresh!.id, 100, now - 2 * 86_400_000)).ok).toBe(true);
    for (let i = 0; i < 2; i++) expect((await leases.reserve(fresh!.id, 100, now)).ok).toBe(true);
    await leases.returnAll();
    const [followed] = await viewer.post("/dashboard/shipments/follow", {
      _csrf: await viewer.csrf(),
      list: "delhivery,1234567890120,ORDER-1",
    });
    expect(followed.status).toBe(200);
    const [, html] = await viewer.get("/dashboard");
    const rows = [
      .../data-testid="usage-days">([\s\S]*?)<\/table>/
        .exec(html)![1]!
        .matchAll(/<th scope="row">([0-9-]+)<\/th><td[^>]*>([\d,]+)<\/td><td[^>]*>([\d,]+)<\/td>/g),
    ].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual([
      ["2026-11-01", "0", "0"],
      ["2026-11-02", "0", "0"],
      ["2026-11-03", "3", "3"],
      ["2026-11-04", "0", "3"],
      ["2026-11-05", "3", "6"],
    ]);
    expect(text(html, "usage-used")).toBe("6");
    expect(html).toContain("<title>2026-11-03: 3 that day, 3 so far</title>");
    expect(html).toContain('<title id="usage-chart-title">Used 6, projected 41 by month end, quota 100</title>');
  });

  test("needs action: exceptions by failed-attempt reason linking to the filtered list, returned (RTO), and the stalled row", async () => {
    const [, html] = await merchant.get("/dashboard");
    const reasons = [
      .../data-testid="action-reasons">([\s\S]*?)<\/ul>/
        .exec(html)![1]!
        .matchAll(/href="([^"]+)"><strong>(\d+)<\/strong> ([a-z ]+)<\/a>/g),
    ].map((m) => [m[1]!.replace(/&amp;/g, "&"), Number(m[2]), m[3]]);
    // The seed's 7 exceptions (every 7th shipment from the 5th) carry reasons in turn: i = 4, 11, 18, 25, 32, 39, 46.
    expect(reasons).toEqual([
      ["/dashboard/shipments?state=exception&reason=address_issue", 3, "address issue"],
      ["/dashboard/shipments?state=exception&reason=customer_refused", 2, "customer refused"],
      ["/dashboard/shipments?state=exception&reason=customer_unavailable", 2, "customer unavailable"],
    ]);
    const [, list] = await merchant.get(reasons[0]![0] as string);
    expect([...list.matchAll(/<span class="state">\(([a-z ]+)\)<\/span>/g)].map((m) => m[1])).toEqual([
      "address issue",
      "address issue",
      "address issue",
    ]);
    expect(html).toMatch(
      /data-testid="action-returned"><a href="\/dashboard\/shipments\?state=returned"><strong>7<\/strong>/,
    );
    // The seed's in-transit shipments after the 20th are stalled: i = 22, 29, 36, 43.
    expect(html).toMatch(
      /data-testid="action-stalled"><a href="\/dashboard\/shipments\?stalled=true"><strong>4<\/strong> stalled/,
    );
    const [, stalled] = await merchant.get("/dashboard/shipments?stalled=true");
    expect(stalled.match(/>stalled<\/span>/g)).toHaveLength(4);
  });
});
