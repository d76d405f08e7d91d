/**
 * The dashboard's Alerts page (docs/alerts.md): settings saved and shown, refused input inline, the test-email
 * button sending one email through the worker's sender to a loopback SMTP server, and the recent alerts listed
 * (with and without SMTP_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, alerts, alertSettings } from "../../src/db/schema/index.ts";
import { ADDRESS_LINK_TTL_MS } from "../../src/modules/alerts/model.ts";
import { createAlertSender, type AlertSender } from "../../src/modules/alerts/sender.ts";
import { UNREADABLE_FIELD } from "../../src/modules/dashboard/http.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startSmtp, type SmtpTwin } from "../helpers/smtp.ts";
import { Client, csrfOf } from "./support.ts";

let ctx: TestContext;
let smtp: SmtpTwin;
let sender: AlertSender;
beforeAll(async () => {
  smtp = await startSmtp();
  ctx = await testContext({ SMTP_URL: smtp.url });
  sender = createAlertSender(ctx.deps);
});
afterAll(async () => {
  await sender.stop();
  await smtp.close();
  await ctx.close();
});

const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
/** The token of the confirmation link in an email's text. */
const tokenOf = (text: string) => /\/dashboard\/alerts\/confirm\/([A-Za-z0-9_-]{43})/.exec(text)![1]!;

async function signedIn(): Promise<{ c: Client; email: string; id: string }> {
  const c = new Client(ctx.app);
  const email = `alerts-${Bun.randomUUIDv7().slice(-8)}@example.com`;
  await c.signUp(email);
  const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email));
  return { c, email, id: acc!.id };
}

describe("dashboard alerts page", () => {
  test("settings: an address and the kinds turned off are saved and shown; a bad address is an inline 422", async () => {
    const { c, email, id } = await signedIn();
    let [res, html] = await c.get("/dashboard/alerts");
    expect(res.status).toBe(200);
    expect(html).toContain(`use your account email, ${email}`);
    expect(html).not.toContain('data-testid="email-off"');
    expect(html).toContain("No alerts yet.");
    [res, html] = await c.post("/dashboard/alerts", {
      _csrf: csrfOf(html),
      email: "not an address",
      kinds: ["quota_80"],
    });
    expect(res.status).toBe(422);
    expect(html).toContain('id="email-error"');
    expect(await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id))).toEqual([]);
    [res] = await c.post("/dashboard/alerts", {
      _csrf: csrfOf(html),
      email: "Ops@Example.com",
      kinds: ["quota_80", "quota_100", "webhook_deactivated"],
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=requested");
    // The kinds are saved at once; the address waits for its confirmation link.
    const [row] = await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id));
    expect(row).toMatchObject({ email: null, disabledKinds: ["secret_rotated", "api_key_created"] });
    [, html] = await c.get("/dashboard/alerts?done=requested");
    expect(html).toContain('value="ops@example.com"');
    expect(html).toContain('data-status="pending"');
    expect(html).toMatch(/Alerts go to <strong>[^<]+<\/strong> \(your account email\)/);
    expect(html).toMatch(/value="quota_80" checked/);
    expect(html).not.toMatch(/value="api_key_created" checked/);
  });

  test("an address with a NUL character or invalid UTF-8 is an inline 422, nothing stored", async () => {
    const { c, id } = await signedIn();
    const [, page] = await c.get("/dashboard/alerts");
    const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    for (const bad of ["ab%00cd%40example.com", "%FF%FEab"]) {
      const res = await ctx.app.handle(
        new Request("http://localhost/dashboard/alerts", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie },
          body: `_csrf=${csrfOf(page)}&email=${bad}&kinds=quota_80`,
        }),
      );
      expect(res.status).toBe(422);
      const html = await res.text();
      expect(html).toContain(UNREADABLE_FIELD);
      expect(html).not.toMatch(/postgres|22021|stack/i);
    }
    expect(await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id))).toEqual([]);
  });

  test("a form without the CSRF token changes nothing", async () => {
    const { c, id } = await signedIn();
    const [res] = await c.post("/dashboard/alerts", { _csrf: "forged", email: "evil@example.com" });
    expect(res.status).toBe(403);
    expect(await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id))).toEqual([]);
  });

  test("a new address gets only its confirmation link; alerts go to the sign-in address until it is opened, then to it", async () => {
    const { c, email, id } = await signedIn();
    let [, html] = await c.get("/dashboard/alerts");
    await c.post("/dashboard/alerts", { _csrf: csrfOf(html), email: "team@example.com" });
    [, html] = await c.get("/dashboard/alerts");
    let [res] = await c.post("/dashboard/alerts/test", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=test");
    await sender.poll();
    expect(mailsTo("team@example.com").map((m) => m.subject)).toEqual(["Confirm your alert email address"]);
    expect(mailsTo(email).map((m) => m.subject)).toEqual(["Test email from Courier Tracking"]);
    const token = tokenOf(mailsTo("team@example.com")[0]!.text);
    // Hashed at rest: neither the link table nor the sent alert holds the token.
    const stored = JSON.stringify([
      await ctx.tdb.sql`select * from alert_address_links where account_id = ${id}`,
      await ctx.tdb.sql`select details from alerts where account_id = ${id}`,
    ]);
    expect(stored).not.toContain(token);

    // The holder of the address opens the link (no sign-in): a page with a button, then the POST confirms.
    const holder = new Client(ctx.app);
    let page: string;
    [res, page] = await holder.get(`/dashboard/alerts/confirm/${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page).toContain("team@example.com");
    expect(
      (await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id)))[0]?.email ?? null,
    ).toBe(null);
    [res, page] = await holder.post(`/dashboard/alerts/confirm/${token}`, { _csrf: csrfOf(page) });
    expect(res.status).toBe(200);
    expect(page).toContain("now go to team@example.com");

    ctx.clock.advance(60_000);
    [, html] = await c.get("/dashboard/alerts");
    expect(html).toContain('data-status="confirmed"');
    expect(html).toContain("(confirmed)");
    [res] = await c.post("/dashboard/alerts/test", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=test");
    [res] = await c.post("/dashboard/alerts/test", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=test-again");
    await sender.poll();
    expect(mailsTo("team@example.com").map((m) => m.subject)).toEqual([
      "Confirm your alert email address",
      "Test email from Courier Tracking",
    ]);
    expect(mailsTo(email)).toHaveLength(1);
    [, html] = await c.get("/dashboard/alerts");
    expect(html).toContain('data-testid="recent-alerts"');
    expect(html).toContain("emailed");
  });

  test("a used, expired, replaced or made-up link is refused: 404 'Link not valid', the address unchanged", async () => {
    const { c, id } = await signedIn();
    const confirmVia = async (token: string) => {
      const holder = new Client(ctx.app);
      const [, page] = await holder.get("/dashboard/sign-in");
      return holder.post(`/dashboard/alerts/confirm/${token}`, { _csrf: csrfOf(page) });
    };
    const ask = async (address: string) => {
      const [, html] = await c.get("/dashboard/alerts");
      await c.post("/dashboard/alerts", { _csrf: csrfOf(html), email: address });
      await sender.poll();
      return tokenOf(mailsTo(address).at(-1)!.text);
    };
    const used = await ask("first@example.com");
    expect((await confirmVia(used))[0].status).toBe(200);
    let [res, page] = await confirmVia(used);
    expect(res.status).toBe(404);
    expect(page).toContain("Link not valid");
    const [getRes] = await new Client(ctx.app).get(`/dashboard/alerts/confirm/${used}`);
    expect(getRes.status).toBe(404);

    const replaced = await ask("old@example.com");
    const expired = await ask("new@example.com");
    expect((await confirmVia(replaced))[0].status).toBe(404);
    expect((await confirmVia("x".repeat(43)))[0].status).toBe(404);
    expect((await confirmVia("<script>"))[0].status).toBe(404);
    ctx.clock.advance(ADDRESS_LINK_TTL_MS + 1);
    [res, page] = await confirmVia(expired);
    expect(res.status).toBe(404);
    expect(page).toContain("unknown, already used or expired");

    const [row] = await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id));
    expect(row!.email).toBe("first@example.com");
  });

  test("at most 3 confirmation emails an hour; the sign-in address is back at once, without a link", async () => {
    const { c, email, id } = await signedIn();
    const save = async (address: string) => {
      const [, html] = await c.get("/dashboard/alerts");
      const [res] = await c.post("/dashboard/alerts", { _csrf: csrfOf(html), email: address });
      return res.headers.get("location");
    };
    for (let i = 0; i < 3; i++) expect(await save(`victim${i}@example.com`)).toBe("/dashboard/alerts?done=requested");
    expect(await save("victim3@example.com")).toBe("/dashboard/alerts?done=limited");
    expect(await save("victim2@example.com")).toBe("/dashboard/alerts?done=saved");
    const [, html] = await c.get("/dashboard/alerts");
    const [res] = await c.post("/dashboard/alerts/resend", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=limited");
    ctx.clock.advance(3_600_001);
    expect(await save("victim3@example.com")).toBe("/dashboard/alerts?done=requested");
    expect(await save(email)).toBe("/dashboard/alerts?done=saved");
    const kinds = await ctx.tdb.sql`select kind from alerts where account_id = ${id}`;
    expect(kinds.map((k) => k.kind)).toEqual(Array(4).fill("address_confirmation"));
    const [, after] = await c.get("/dashboard/alerts");
    expect(after).toContain('data-status="confirmed"');
  });

  test("without SMTP_URL the page says alerts are listed only, and lists them", async () => {
    const bare = await testContext();
    try {
      const c = new Client(bare.app);
      const email = `bare-${Bun.randomUUIDv7().slice(-8)}@example.com`;
      await c.signUp(email);
      const [, keys] = await c.get("/dashboard/keys");
      await c.post("/dashboard/keys", { _csrf: csrfOf(keys), name: "ci" });
      const [res, html] = await c.get("/dashboard/alerts");
      expect(res.status).toBe(200);
      expect(html).toContain('data-testid="email-off"');
      expect(html).toContain("API key created: ci");
      expect(html).toContain("shown here only");
    } finally {
      await bare.close();
    }
  });
});
