/**
 * NDR actions in the dashboard (docs/ndr-actions.md): a failed shipment's Act link from the list, the action buttons
 * (server-rendered forms), the confirmation step that sends nothing, the send through the Delhivery twin, the history
 * with masked consignee values, refusals shown on the page, CSRF and another account's shipment refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema/index.ts";
import { createApiKey } from "../../src/modules/accounts/service.ts";
import { processDueActions } from "../../src/modules/actions/job.ts";
import { ACTION_COUNTER } from "../../src/modules/couriers/carriers/delhivery/twin-actions.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, csrfOf } from "./support.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx?.close());

/** A signed-up merchant on `plan` following `numbers` (looked up once through /v1/track). */
async function merchant(numbers: string[], plan = "growth") {
  const c = new Client(ctx.app);
  const email = `act-${Bun.randomUUIDv7().slice(-8)}@example.com`;
  await c.signUp(email);
  const [a] = await ctx.tdb.db.update(accounts).set({ plan }).where(eq(accounts.email, email)).returning();
  const { key } = await createApiKey(ctx.tdb.db, a!.id, "t", { alert: false });
  for (const n of numbers) {
    const [res] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${n}`, { key });
    expect(res.status).toBe(200);
  }
  return { c, key };
}

const page = (n: string) => `/dashboard/shipments/delhivery/${n}/actions`;

describe("the actions page", () => {
  test("Act link, buttons, a confirmation that sends nothing, then the send and the history, accepted", async () => {
    const n = "8123456780203";
    const { c } = await merchant([n]);
    const [, list] = await c.get("/dashboard/shipments?state=exception");
    expect(list).toContain(`href="${page(n)}"`);
    const [res, html] = await c.get(page(n));
    expect(res.status).toBe(200);
    for (const a of ["reattempt", "defer_delivery", "update_consignee", "return_to_origin"])
      expect(html).toContain(`data-testid="action-${a}"`);
    expect(html).toContain('data-testid="no-history"');

    const csrf = csrfOf(html);
    const [conf, confHtml] = await c.post(`${page(n)}/confirm`, {
      _csrf: csrf,
      action: "update_consignee",
      phone: "9876501234",
    });
    expect(conf.status).toBe(200);
    expect(confHtml).toContain("98******34");
    expect(confHtml).toContain('data-testid="confirm"');
    await processDueActions(ctx.deps);
    expect(ctx.sim.calls(ACTION_COUNTER, n)).toBe(0);

    const [sent] = await c.post(page(n), { _csrf: csrf, action: "update_consignee", phone: "9876501234" });
    expect(sent.status).toBe(303);
    await processDueActions(ctx.deps);
    ctx.clock.advance(11_000);
    await processDueActions(ctx.deps);
    expect(ctx.sim.calls(ACTION_COUNTER, n)).toBe(1);
    const [, after] = await c.get(page(n));
    expect(after).toContain('data-testid="action-history"');
    expect(after).toContain(">accepted<");
    expect(after).toContain("phone 98******34");
    expect(after).not.toContain("9876501234");
  });

  test("a refusal shows on the page with its rule and calls no courier; CSRF and another account's shipment are refused", async () => {
    const n = "8123456780111"; // in transit: no re-attempt
    const { c } = await merchant([n]);
    const [, html] = await c.get(page(n));
    const [res, body] = await c.post(page(n), { _csrf: csrfOf(html), action: "reattempt" });
    expect(res.status).toBe(409);
    expect(body).toContain("Rule state");
    expect(ctx.sim.calls(ACTION_COUNTER, n)).toBe(0);

    const [stale] = await c.post(page(n), { _csrf: "x".repeat(43), action: "reattempt" });
    expect(stale.status).toBe(403);
    const other = await merchant([]);
    const [notMine] = await other.c.get(page(n));
    expect(notMine.status).toBe(404);
  });
});
