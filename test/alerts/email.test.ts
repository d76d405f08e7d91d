/**
 * Owner alert emails end to end (docs/alerts.md): causes queue alerts in their own transactions, the worker's
 * sender delivers them to a real SMTP server on loopback, and each alert is one email however often its cause or
 * the sender runs again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { alerts, alertSettings } from "../../src/db/schema/index.ts";
import { createApiKey } from "../../src/modules/accounts/service.ts";
import { recordAlert } from "../../src/modules/alerts/record.ts";
import { composeAlert } from "../../src/modules/alerts/mail.ts";
import { pruneAlerts } from "../../src/modules/alerts/prune.ts";
import { claimAlerts, createAlertSender, LEASE_MS, type AlertSender } from "../../src/modules/alerts/sender.ts";
import { ALERT_RETRY_BASE_MS } from "../../src/domain/alerts.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";
import { startSmtp, type SmtpTwin } from "../helpers/smtp.ts";
import { emit, shipment } from "../webhooks/fixtures.ts";
import { startReceiver, webhookEnv } from "../webhooks/receiver.ts";

// intranet.test is data only: the address guard refuses it before any socket opens.
const resolver: Resolver = async () => [{ address: "10.0.0.7", family: 4 }];

let ctx: TestContext;
let smtp: SmtpTwin;
let sender: AlertSender;
beforeAll(async () => {
  smtp = await startSmtp();
  ctx = await testContext(await webhookEnv({ SMTP_URL: smtp.url, ALERT_FROM: "Alerts <alerts@example.com>" }));
  sender = createAlertSender(ctx.deps);
});
afterAll(async () => {
  await sender.stop();
  await smtp.close();
  await ctx.close();
});

/** The sender's counter of `outcome` (docs/operations.md). */
async function emails(outcome: string): Promise<number> {
  const m = await serviceRegistry.getSingleMetric("courier_tracking_alert_emails_total")!.get();
  return m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}
const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
const rowsOf = (accountId: string) => ctx.tdb.db.select().from(alerts).where(eq(alerts.accountId, accountId));

describe("alert emails", () => {
  test("a webhook deactivated after 20 failed deliveries: exactly one email, with its last errors and the reactivation link", async () => {
    const acc = await ctx.account("business");
    const [res, body] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({ url: "https://intranet.test/hook", events: ["tracking.updated"], mode: "live" }),
    });
    expect(res.status).toBe(201);
    const id = body.data.id as string;
    const shp = await shipment(ctx.tdb.db, [acc.id]);
    const worker = createDeliveryWorker({ ...ctx.deps, resolver });
    for (let i = 0; i < 20; i++) {
      await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
      await worker.runOnce();
    }
    await worker.stop();
    await sender.poll();
    await sender.poll();
    const mails = mailsTo(acc.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.from).toContain("<alerts@example.com>");
    expect(mails[0]!.subject).toBe(`Webhook ${id} was deactivated`);
    expect(mails[0]!.text).toContain("address_blocked");
    expect(mails[0]!.text).toContain(`${ctx.config.publicBaseUrl}/dashboard/webhooks/${id}`);
    expect((await rowsOf(acc.id)).map((r) => [r.kind, r.state, r.recipient])).toEqual([
      ["webhook_deactivated", "sent", acc.email],
    ]);
  });

  test("the deactivation email quotes the receiver's last real answers (HTTP 500), not the deliveries skipped after", async () => {
    const rx = await startReceiver();
    try {
      rx.route("/down", () => new Response("maintenance", { status: 500 }));
      const acc = await ctx.account("business");
      const [res, body] = await ctx.call("/v1/webhooks", {
        key: acc.key,
        method: "POST",
        body: JSON.stringify({ url: rx.url("/down"), events: ["tracking.updated"], mode: "live" }),
      });
      expect(res.status).toBe(201);
      const shp = await shipment(ctx.tdb.db, [acc.id]);
      const worker = createDeliveryWorker(ctx.deps);
      const emitMany = async (n: number) => {
        for (let i = 0; i < n; i++) await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
      };
      // 20 deliveries fail their 6 attempts (retries 1 s apart) and deactivate the webhook; 5 more, queued 2 s
      // later, are between attempts then, and their next retries are skipped.
      await emitMany(20);
      await worker.runOnce();
      for (let s = 1; s <= 5; s++) {
        ctx.clock.advance(1_000);
        if (s === 2) await emitMany(5);
        await worker.runOnce();
      }
      const [, hook] = await ctx.call(`/v1/webhooks/${body.data.id}`, { key: acc.key });
      expect(hook.data.status).toBe("deactivated");
      const answered = rx.on("/down").length;
      // Their retries come due after the deactivation: each is skipped without an attempt.
      ctx.clock.advance(60_000);
      expect(await worker.runOnce()).toBeGreaterThan(0);
      await worker.stop();
      expect(rx.on("/down")).toHaveLength(answered);
      await sender.poll();
      const [mail] = mailsTo(acc.email);
      expect(mail!.subject).toBe(`Webhook ${body.data.id} was deactivated`);
      const quoted = mail!.text.split("\n").filter((l) => l.startsWith("- "));
      expect(quoted).toHaveLength(3);
      expect(quoted.every((l) => l.includes("HTTP 500"))).toBe(true);
      expect(mail!.text).not.toContain("webhook_deactivated");
    } finally {
      rx.stop();
    }
  });

  test("the 80 % and 100 % quota marks: one email each, even when units go back and are counted again", async () => {
    const acc = await ctx.account("free");
    const leases = ctx.deps.services.quotaLeases;
    const now = ctx.clock.now();
    const reserve = async (n: number) => {
      for (let i = 0; i < n; i++) expect((await leases.reserve(acc.id, 100, now)).ok).toBe(true);
    };
    await reserve(79);
    await sender.poll();
    expect(mailsTo(acc.email)).toHaveLength(0);
    await reserve(1);
    await sender.poll();
    expect(mailsTo(acc.email).map((m) => m.subject)).toEqual([expect.stringContaining("80 % used")]);
    // A unit that did not end in 200 goes back; counting it again crosses 80 % again, still one alert.
    const r = await leases.reserve(acc.id, 100, now);
    await leases.release(acc.id, r);
    await leases.returnIdle(Date.now() + 3_600_000);
    await reserve(20);
    expect((await leases.reserve(acc.id, 100, now)).ok).toBe(false);
    await sender.poll();
    const subjects = mailsTo(acc.email).map((m) => m.subject);
    expect(subjects).toHaveLength(2);
    expect(subjects[1]).toContain("used up");
    expect(mailsTo(acc.email)[1]!.text).toContain("monthly quota of 100");
  });

  test("a bulk follow that crosses 80 % queues the alert in its own transaction", async () => {
    const acc = await ctx.account("free");
    const items = Array.from({ length: 85 }, (_, i) => ({
      courier: "delhivery",
      tracking_number: String(4_200_000_000_000 + i),
    }));
    const [res] = await ctx.call("/v1/shipments", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({ shipments: items }),
    });
    expect(res.status).toBe(202);
    expect((await rowsOf(acc.id)).map((r) => r.kind)).toEqual(["quota_80"]);
  });

  test("a kind turned off is not emailed (recorded as skipped); the others go to the chosen address", async () => {
    const acc = await ctx.account("free");
    await ctx.tdb.db
      .insert(alertSettings)
      .values({ accountId: acc.id, email: "ops@example.com", disabledKinds: ["api_key_created"] });
    await createApiKey(ctx.tdb.db, acc.id, "ci", { nowMs: ctx.clock.now() });
    const [res] = await ctx.call("/v1/webhooks/rotate-secret", { key: acc.key, method: "POST" });
    expect(res.status).toBe(200);
    await sender.poll();
    expect(mailsTo(acc.email)).toHaveLength(0);
    expect(mailsTo("ops@example.com").map((m) => m.subject)).toEqual(["Webhook signing secret rotated"]);
    const rows = await rowsOf(acc.id);
    expect(rows.map((r) => [r.kind, r.state]).sort()).toEqual([
      ["api_key_created", "skipped"],
      ["secret_rotated", "sent"],
    ]);
  });

  test("at least once, never twice: a dead worker's claim is sent by the next one; a cause queued again is no new alert", async () => {
    const acc = await ctx.account("free");
    const alert = {
      accountId: acc.id,
      kind: "api_key_created" as const,
      dedupeKey: "key_dead",
      details: { name: "x", prefix: "ctk_x" },
      at: ctx.clock.now(),
    };
    await recordAlert(ctx.tdb.db, alert);
    await recordAlert(ctx.tdb.db, alert);
    // A worker claims it and dies before sending: the claim hides it until its lease ends.
    const claimed = await claimAlerts(ctx.tdb.sql, ctx.clock.now(), 100);
    expect(claimed.map((c) => c.account_id)).toContain(acc.id);
    await sender.poll();
    expect(mailsTo(acc.email)).toHaveLength(0);
    ctx.clock.advance(LEASE_MS); // the dead worker's lease runs out
    const restarted = createAlertSender(ctx.deps);
    await restarted.poll();
    await restarted.poll();
    await restarted.stop();
    await sender.poll();
    expect(mailsTo(acc.email)).toHaveLength(1);
    // The late worker's record finds its lease gone and changes nothing.
    expect((await rowsOf(acc.id)).map((r) => [r.state, r.attempts])).toEqual([["sent", 2]]);
  });

  test("a refused send is retried after a backoff and then sent once", async () => {
    const acc = await ctx.account("free");
    const [retried, sent] = [await emails("retried"), await emails("sent")];
    smtp.refuseNext(1);
    await recordAlert(ctx.tdb.db, { accountId: acc.id, kind: "test", dedupeKey: "retry", at: ctx.clock.now() });
    await sender.poll();
    let [row] = await rowsOf(acc.id);
    expect(row).toMatchObject({ state: "pending", attempts: 1 });
    expect(row!.lastError).toContain("451");
    expect(row!.nextAttemptAt.getTime()).toBe(ctx.clock.now() + ALERT_RETRY_BASE_MS);
    expect(mailsTo(acc.email)).toHaveLength(0);
    await sender.poll();
    expect(mailsTo(acc.email)).toHaveLength(0); // not due before its backoff ends
    ctx.clock.advance(ALERT_RETRY_BASE_MS);
    await sender.poll();
    [row] = await rowsOf(acc.id);
    expect(row).toMatchObject({ state: "sent", attempts: 2, lastError: null });
    expect(mailsTo(acc.email)).toHaveLength(1);
    expect([await emails("retried"), await emails("sent")]).toEqual([retried + 1, sent + 1]);
  });

  test("the worker's scheduler sends over smtps with a private CA (SMTP_CA_FILE); the password never reaches a row", async () => {
    const tls = await startSmtp({ secure: true });
    const env = await webhookEnv({
      SMTP_URL: tls.url,
      SMTP_CA_FILE: (await import("../webhooks/receiver.ts").then((m) => m.testCert())).caFile,
    });
    const other = await testContext(env);
    const scheduler = createScheduler(other.deps, { jobs: ["alerts"], alertsPattern: "* * * * * *" });
    try {
      await scheduler.start();
      const acc = await other.account("free");
      await createApiKey(other.tdb.db, acc.id, "deploy", { nowMs: other.clock.now() });
      expect(await eventually(() => tls.messages.length === 1, 15_000)).toBe(true);
      expect(tls.messages[0]!.subject).toBe("API key created: deploy");
      expect(tls.logins).toEqual(["alerts"]);
      const rows = await other.tdb.sql`select * from alerts`;
      expect(JSON.stringify(rows)).not.toContain("s3cret-pass");
    } finally {
      await scheduler.stop();
      await tls.close();
      await other.close();
    }
  });

  test("retention: alerts no longer pending go after RETENTION_DAYS; a quota alert stays 62 days (its month's dedupe)", async () => {
    const acc = await ctx.account("free");
    const now = Date.now();
    const day = 86_400_000;
    const seed = async (kind: string, key: string, state: string, ageDays: number) =>
      ctx.tdb
        .sql`insert into alerts (account_id, kind, dedupe_key, state, created_at) values (${acc.id}, ${kind}, ${key}, ${state}, ${new Date(now - ageDays * day).toISOString()})`;
    await seed("api_key_created", "old-sent", "sent", 31);
    await seed("api_key_created", "old-pending", "pending", 31);
    await seed("api_key_created", "young-sent", "sent", 29);
    await seed("quota_80", "old-month", "sent", 40);
    await seed("quota_100", "older-month", "sent", 63);
    expect(
      await pruneAlerts(ctx.tdb.db, now - 30 * day, now, { batchSize: 1, maxBatches: 100 }),
    ).toBeGreaterThanOrEqual(2);
    expect((await rowsOf(acc.id)).map((r) => r.dedupeKey).sort()).toEqual(["old-month", "old-pending", "young-sent"]);
  });
});

describe("alert text", () => {
  test("an owner's text with line breaks never makes a header line; the webhook email names only the host", () => {
    const m = composeAlert(
      {
        id: 1,
        kind: "api_key_created",
        details: { name: "ci\r\nBcc: victim@example.com", prefix: "ctk_x" },
        createdAt: new Date(),
      },
      "https://api.example.com",
    );
    expect(m.subject).toBe("API key created: ci Bcc: victim@example.com");
    const w = composeAlert(
      {
        id: 2,
        kind: "webhook_deactivated",
        details: { webhook_id: "wh_1", url: "https://hooks.example.com/p?token=abc" },
        createdAt: new Date(),
        lastErrors: [],
      },
      "https://api.example.com",
    );
    expect(w.text).toContain("(hooks.example.com)");
    expect(w.text).not.toContain("token=abc");
  });
});
