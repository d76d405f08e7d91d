/**
 * The dashboard's Alerts page (docs/alerts.md): settings saved and shown, refused input inline, the test-email
 * button sending one email through the worker's sender to a loopback SMTP server, and the recent alerts listed
 * (with and without SMTP_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, alerts, alertSettings } from "../../src/db/schema/index.ts";
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
    const [row] = await ctx.tdb.db.select().from(alertSettings).where(eq(alertSettings.accountId, id));
    expect(row).toMatchObject({ email: "ops@example.com", disabledKinds: ["secret_rotated", "api_key_created"] });
    [, html] = await c.get("/dashboard/alerts?done=saved");
    expect(html).toContain('value="ops@example.com"');
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

  test("send a test email: one email at the alert address, even with every kind turned off; once a minute; listed", async () => {
    const { c, id } = await signedIn();
    let [, html] = await c.get("/dashboard/alerts");
    await c.post("/dashboard/alerts", { _csrf: csrfOf(html), email: "team@example.com" });
    [, html] = await c.get("/dashboard/alerts");
    let [res] = await c.post("/dashboard/alerts/test", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=test");
    [res] = await c.post("/dashboard/alerts/test", { _csrf: csrfOf(html) });
    expect(res.headers.get("location")).toBe("/dashboard/alerts?done=test-again");
    await sender.poll();
    const mails = smtp.messages.filter((m) => m.to.includes("team@example.com"));
    expect(mails.map((m) => m.subject)).toEqual(["Test email from Courier Tracking"]);
    expect((await ctx.tdb.db.select().from(alerts).where(eq(alerts.accountId, id))).map((a) => a.state)).toEqual([
      "sent",
    ]);
    [, html] = await c.get("/dashboard/alerts");
    expect(html).toContain('data-testid="recent-alerts"');
    expect(html).toContain("emailed");
    expect(html).toContain("team@example.com");
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
