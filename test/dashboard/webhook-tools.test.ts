/**
 * Dashboard webhook page tools (docs/dashboard.md, "Webhooks"): the custom headers editor (masked, kept when left
 * empty, removed when the name is cleared), the deliveries filter and sequence column, and the receiver audit
 * button with its report and hourly limit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, deliveries, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { AUDITS_PER_HOUR } from "../../src/modules/webhooks/audit.ts";
import { openHeaders } from "../../src/modules/webhooks/headers.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, inlineScripts, startReceiver, webhookEnv } from "./support.ts";

let ctx: TestContext;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let alice: Client;
let hook: string;
const TOKEN = "Bearer gw_secret_token_1234567890";

beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  alice = new Client(ctx.app);
  await alice.signUp(`tools-${Bun.randomUUIDv7().slice(-6)}@example.com`);
});
afterAll(async () => {
  rx.stop();
  await ctx.close();
});

const row = async (id: string) => (await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id)))[0]!;
const save = async (fields: Record<string, string | string[]>) =>
  alice.post(`/dashboard/webhooks/${hook}`, {
    _csrf: await alice.csrf(`/dashboard/webhooks/${hook}/edit`),
    url: rx.url("/tools"),
    events: "tracking.delivered",
    mode: "test",
    ...fields,
  });

describe("custom headers editor", () => {
  test("create with headers: stored encrypted, shown masked, never echoed raw; sent on a test fire", async () => {
    const [res] = await alice.post("/dashboard/webhooks", {
      _csrf: await alice.csrf("/dashboard/webhooks/new"),
      url: rx.url("/tools"),
      events: "tracking.delivered",
      mode: "test",
      header_name: ["Authorization", "X-Tenant", "", "", ""],
      header_value: [TOKEN, "acme", "", "", ""],
    });
    expect(res.status).toBe(201);
    hook = (
      await ctx.tdb.db
        .select()
        .from(webhooks)
        .where(eq(webhooks.url, rx.url("/tools")))
    )[0]!.id;
    expect(openHeaders(ctx.deps.secretsKey, hook, (await row(hook)).headersEnc)).toEqual({
      Authorization: TOKEN,
      "X-Tenant": "acme",
    });
    for (const p of [`/dashboard/webhooks/${hook}`, `/dashboard/webhooks/${hook}/edit`]) {
      const [r, page] = await alice.get(p);
      expect(r.status).toBe(200);
      expect(page).not.toContain("gw_secret_token");
      expect(page).toContain("Bear…••••");
      expect(inlineScripts(page)).toBe(0);
    }
    const [, edit] = await alice.get(`/dashboard/webhooks/${hook}/edit`);
    expect(edit).toContain('value="Authorization"');
    expect(edit.match(/name="header_name"/g)).toHaveLength(5);
    await alice.post(`/dashboard/webhooks/${hook}/test`, { _csrf: await alice.csrf(`/dashboard/webhooks/${hook}`) });
    expect(rx.hits.at(-1)!.headers).toMatchObject({ authorization: TOKEN, "x-tenant": "acme" });
  });

  test("edit: an empty value keeps the stored one, a cleared name removes the header, a new one is added", async () => {
    const [res] = await save({
      header_name: ["Authorization", "", "X-Region", "", ""],
      header_value: ["", "", "south", "", ""],
    });
    expect(res.status).toBe(303);
    expect(openHeaders(ctx.deps.secretsKey, hook, (await row(hook)).headersEnc)).toEqual({
      Authorization: TOKEN,
      "X-Region": "south",
    });
  });

  test("a reserved name, a value without a name, a new name without a value, a name twice: 422 with the reason, nothing saved", async () => {
    const before = (await row(hook)).headersEnc;
    const cases: [Record<string, string[]>, string][] = [
      [{ header_name: ["X-Webhook-Mode"], header_value: ["x"] }, "Header name is reserved"],
      [{ header_name: [""], header_value: ["orphan"] }, "Enter a name for each header value."],
      [{ header_name: ["X-New"], header_value: [""] }, "Enter a value for X-New."],
      [{ header_name: ["X-A", "x-a"], header_value: ["1", "2"] }, "is given twice"],
      [{ header_name: ["X-A"], header_value: ["bad\u0001value"] }, "Header values: visible ASCII"],
    ];
    for (const [fields, msg] of cases) {
      const [res, html] = await save(fields);
      expect([res.status, html.includes(msg)], msg).toEqual([422, true]);
      expect(html).toContain('aria-describedby="headers-error"');
    }
    expect((await row(hook)).headersEnc).toBe(before);
  });
});

describe("deliveries filter and sequence column", () => {
  test("status, event type and UTC days filter the list; each row shows its sequence", async () => {
    const acc = (await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, hook)))[0]!.accountId;
    await ctx.tdb.db.delete(deliveries).where(eq(deliveries.webhookId, hook));
    const at = (d: number) => new Date(Date.UTC(2026, 10, d, 12));
    const rows = [
      { seq: 1, type: "tracking.in_transit", state: "delivered", day: 3 },
      { seq: 2, type: "tracking.delivered", state: "abandoned", day: 4 },
      { seq: 3, type: "tracking.delivered", state: "delivered", day: 5 },
    ];
    for (const r of rows)
      await ctx.tdb.db.insert(deliveries).values({
        id: newId("dlv"),
        webhookId: hook,
        accountId: acc,
        sequence: r.seq,
        eventType: r.type,
        mode: "live",
        state: r.state,
        attempts: 1,
        enqueuedAt: at(r.day),
      });
    const seqs = async (q: string) => {
      const [res, html] = await alice.get(`/dashboard/webhooks/${hook}${q}`);
      expect(res.status).toBe(200);
      return [...html.matchAll(/data-testid="delivery-sequence">(\d+|—)</g)].map((m) => m[1]);
    };
    expect(await seqs("")).toEqual(["3", "2", "1"]);
    expect(await seqs("?status=delivered")).toEqual(["3", "1"]);
    expect(await seqs("?event_type=tracking.delivered")).toEqual(["3", "2"]);
    expect(await seqs("?since=2026-11-04&until=2026-11-04")).toEqual(["2"]);
    expect(await seqs("?status=failed&event_type=tracking.in_transit")).toEqual([]);
    // Unknown values are ignored rather than refused; the form shows what was applied.
    expect(await seqs("?status=nope&since=2026-13-45")).toEqual(["3", "2", "1"]);
    const [, html] = await alice.get(`/dashboard/webhooks/${hook}?status=delivered`);
    expect(html).toContain('<option value="delivered" selected>');
    expect(html).toContain("Clear filters");
  });
});

describe("receiver audit", () => {
  test("the button runs the audit and the page shows the report; a receiver that accepts everything fails three cases", async () => {
    const before = rx.hits.length;
    const [res] = await alice.post(`/dashboard/webhooks/${hook}/audit`, {
      _csrf: await alice.csrf(`/dashboard/webhooks/${hook}`),
    });
    expect(res.status).toBe(303);
    const audits = rx.hits.slice(before);
    expect(audits.map((h) => h.headers["x-webhook-audit"])).toEqual(["true", "true", "true", "true"]);
    const [page, html] = await alice.get(res.headers.get("location")!);
    expect(page.status).toBe(200);
    expect(html).toContain('data-testid="audit-report"');
    expect(html).toContain("Failed: wrong_signature, stale_timestamp, no_signature.");
    expect([...html.matchAll(/<tr data-audit-case="(\w+)">/g)].map((m) => m[1])).toEqual([
      "valid",
      "wrong_signature",
      "stale_timestamp",
      "no_signature",
    ]);
    // A hand-made query that is not a report shows none.
    const [, forged] = await alice.get(`/dashboard/webhooks/${hook}?audit=${encodeURIComponent("<b>~p")}`);
    expect(forged).not.toContain('data-testid="audit-report"');
    expect((await alice.post(`/dashboard/webhooks/${hook}/audit`, { _csrf: "nope" }))[0].status).toBe(403);
  });

  test(`after ${AUDITS_PER_HOUR} audits in the hour the page says so with 429`, async () => {
    for (let i = 1; i < AUDITS_PER_HOUR; i++)
      expect(
        (
          await alice.post(`/dashboard/webhooks/${hook}/audit`, {
            _csrf: await alice.csrf(`/dashboard/webhooks/${hook}`),
          })
        )[0].status,
      ).toBe(303);
    const [res, html] = await alice.post(`/dashboard/webhooks/${hook}/audit`, {
      _csrf: await alice.csrf(`/dashboard/webhooks/${hook}`),
    });
    expect(res.status).toBe(429);
    expect(html).toContain(`At most ${AUDITS_PER_HOUR} receiver audits an hour per account`);
  });
});
