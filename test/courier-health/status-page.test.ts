/** `/status` and `/status/feed.atom`: public, cacheable, no script and no account data; states, charts, incidents. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { STATUS_TTL_MS } from "../../src/modules/dashboard/status-page.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { scriptMinutes } from "./script.ts";

let ctx: TestContext;
let email: string;

beforeAll(async () => {
  ctx = await testContext();
  const a = await ctx.account("growth", `status-secret-${Bun.randomUUIDv7().slice(-6)}@example.com`);
  email = a.email;
  // A real lookup by that account, so that the page could leak it if it read account data.
  await ctx.call("/v1/track?courier=dtdc&tracking_number=D12345678901", { key: a.key });
  ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 30));
  await scriptMinutes(ctx, "bluedart", 2, { ok: 30 });
  await scriptMinutes(ctx, "bluedart", 12, { ok: 10, timeout: 20 });
  ctx.clock.advance(STATUS_TTL_MS);
});

afterAll(() => ctx.close());

test("the page shows each courier's state, 24-hour charts and the open incident; public and cacheable", async () => {
  const [res, body] = await ctx.call("/status");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/html");
  expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  const page = body as string;
  expect(page).not.toContain("<script");
  expect(page).not.toContain(email);
  expect(page).not.toContain("D12345678901");
  expect(page).toContain("Blue Dart (degraded): tracking answers may be late.");
  const card = page.slice(page.indexOf('data-testid="courier-bluedart"'));
  expect(card).toMatch(/data-testid="state">Degraded</);
  expect((card.match(/<svg class="spark"/g) ?? []).length).toBeGreaterThanOrEqual(2);
  expect(page).toMatch(/<table data-testid="incidents">[\s\S]*Blue Dart[\s\S]*ongoing/);
  expect(page).toContain('href="/status/feed.atom"');
});

test("the Atom feed has one entry per transition with a stable id; the same document until the cache expires", async () => {
  const [res, feed] = await ctx.call("/status/feed.atom");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("application/atom+xml");
  expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  const ids = [...(feed as string).matchAll(/<id>urn:courier-tracking:(evt_[0-9a-f]+)<\/id>/g)].map((m) => m[1]);
  expect(ids).toHaveLength(1);
  expect(feed as string).toContain("<title>Blue Dart: degraded</title>");
  const [, again] = await ctx.call("/status/feed.atom");
  expect(again).toBe(feed);
});
