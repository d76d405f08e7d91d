/**
 * Alert e-mail cannot flood an address (docs/alerts.md, "Limits and digests", "The alert address"): at most
 * ALERTS_PER_WINDOW e-mails of a kind per account and hour, the rest in one digest when the hour ends, and nothing
 * but the confirmation link reaches an address the owner has not confirmed. The causes and the sender's windows run
 * on the fake clock (each rotation its own instant), so a test ends a window by moving the clock an hour on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { alerts } from "../../src/db/schema/index.ts";
import { createApiKey } from "../../src/modules/accounts/service.ts";
import { ALERT_WINDOW_MS, ALERTS_PER_WINDOW } from "../../src/modules/alerts/model.ts";
import { createAlertSender, type AlertSender } from "../../src/modules/alerts/sender.ts";
import { changeAlertAddress } from "../../src/modules/alerts/settings.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startSmtp, type SmtpTwin } from "../helpers/smtp.ts";

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

const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));

/** Ends the sending windows: an hour passes (the digests come due at their window's end). */
function endWindows(): void {
  ctx.clock.advance(ALERT_WINDOW_MS);
}

async function rotate(key: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    ctx.clock.advance(400);
    const [res] = await ctx.call("/v1/webhooks/rotate-secret", { key, method: "POST" });
    expect(res.status).toBe(200);
    await sender.poll();
  }
}

describe("alert limits", () => {
  test("100 secret rotations in 40 s: 5 emails, then one digest of the other 95 when the hour ends; none to an unconfirmed address", async () => {
    const acc = await ctx.account("pro");
    const unconfirmed = `ops-${acc.id.slice(-6)}@example.com`;
    expect(await changeAlertAddress(ctx.tdb.db, ctx.deps.secretsKey, acc.id, unconfirmed, ctx.clock.now())).toBe(
      "requested",
    );
    await rotate(acc.key, 100);
    await sender.poll();
    expect(mailsTo(unconfirmed).map((m) => m.subject)).toEqual(["Confirm your alert email address"]);
    const alone = mailsTo(acc.email);
    expect(alone).toHaveLength(ALERTS_PER_WINDOW);
    expect(alone.every((m) => m.subject === "Webhook signing secret rotated")).toBe(true);
    const rows = await ctx.tdb.db.select().from(alerts).where(eq(alerts.accountId, acc.id));
    const states = (kind: string) => rows.filter((r) => r.kind === kind).map((r) => r.state);
    expect(states("secret_rotated").filter((s) => s === "sent")).toHaveLength(ALERTS_PER_WINDOW);
    expect(states("secret_rotated").filter((s) => s === "folded")).toHaveLength(100 - ALERTS_PER_WINDOW);
    expect(states("digest")).toEqual(["queued"]);

    endWindows();
    await sender.poll();
    const all = mailsTo(acc.email);
    expect(all).toHaveLength(ALERTS_PER_WINDOW + 1);
    const digest = all[ALERTS_PER_WINDOW]!;
    expect(digest.subject).toBe(`${100 - ALERTS_PER_WINDOW} more alerts: The webhook signing secret is rotated`);
    expect(digest.text.match(/^- .*Webhook signing secret rotated$/gm)).toHaveLength(50);
    expect(digest.text).toContain(`… and ${100 - ALERTS_PER_WINDOW - 50} more`);
    expect(mailsTo(unconfirmed)).toHaveLength(1);

    // A new hour: the next rotation is emailed on its own again.
    await rotate(acc.key, 1);
    expect(mailsTo(acc.email)).toHaveLength(ALERTS_PER_WINDOW + 2);
  });

  test("the limit is per kind: keys created while rotations are folded are still emailed", async () => {
    const acc = await ctx.account("pro");
    await rotate(acc.key, ALERTS_PER_WINDOW + 3);
    await createApiKey(ctx.tdb.db, acc.id, "deploy", { nowMs: ctx.clock.now() });
    await sender.poll();
    const subjects = mailsTo(acc.email).map((m) => m.subject);
    expect(subjects.filter((s) => s === "Webhook signing secret rotated")).toHaveLength(ALERTS_PER_WINDOW);
    expect(subjects).toContain("API key created: deploy");
  });
});
