/**
 * Alert emails in real worker processes (docs/alerts.md): without SMTP_URL one start-up line says alerts are only
 * shown in the dashboard; with it the worker sends the queued alerts. An SMTP password never reaches the output: not
 * in a configuration error, not when the mail server refuses the login.
 *
 * NETWORK SAFETY: the SMTP server listens on 127.0.0.1 only.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { eventually } from "../helpers/eventually.ts";
import { startSmtp } from "../helpers/smtp.ts";
import { servicesOnTestDatabase } from "../ops/process.ts";

const services = servicesOnTestDatabase();
const key = () => randomBytes(32).toString("base64url");
const SECRETS_KEY = key();

async function queueAlert(email: string): Promise<string> {
  const id = `acc_${randomBytes(16).toString("hex")}`;
  const sql = services.db().sql;
  await sql`insert into accounts (id, email) values (${id}, ${email})`;
  await sql`insert into alerts (account_id, kind, dedupe_key, details) values (${id}, 'api_key_created', 'k1', ${JSON.stringify({ name: "ci", prefix: "ctk_x" })}::jsonb)`;
  return id;
}

test("without SMTP_URL a worker says once that alerts are shown in the dashboard only", async () => {
  const worker = services.spawn({ DATABASE_URL: services.db().url, SECRETS_KEY, ROLE: "worker" });
  await worker.waitForLine((l) => l.msg === "worker started", 30_000);
  expect(worker.lines().filter((l) => String(l.msg).startsWith("SMTP_URL is unset"))).toHaveLength(1);
  worker.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
}, 60_000);

test("a worker with SMTP_URL emails a queued alert; a refused login is retried and its password is printed nowhere", async () => {
  const smtp = await startSmtp({ pass: "right-pass-7c1e" });
  const wrong = `wrong-pass-${randomBytes(6).toString("hex")}`;
  try {
    // A URL without a host: a configuration error that names SMTP_URL and not the password.
    const bad = services.spawn({
      DATABASE_URL: services.db().url,
      SECRETS_KEY,
      ROLE: "worker",
      SMTP_URL: `smtp://alerts:${wrong}@`,
    });
    expect(await bad.exited).toBe(1);
    expect(bad.stdout() + bad.stderr()).toContain("SMTP_URL");

    await queueAlert(`owner-${randomBytes(4).toString("hex")}@example.com`);
    const refused = services.spawn({
      DATABASE_URL: services.db().url,
      SECRETS_KEY,
      ROLE: "worker",
      SMTP_URL: smtp.url.replace("right-pass-7c1e", wrong),
    });
    const line = await refused.waitForLine((l) => l.msg === "alert email not sent", 30_000);
    expect(line.error).toContain("Invalid");
    refused.kill("SIGTERM");
    expect(await refused.exited).toBe(0);
    const [row] = await services.db().sql`select state, attempts, last_error from alerts`;
    expect(row).toMatchObject({ state: "pending", attempts: 1 });
    await services.db().sql`update alerts set next_attempt_at = now()`;

    const good = services.spawn({ DATABASE_URL: services.db().url, SECRETS_KEY, ROLE: "worker", SMTP_URL: smtp.url });
    await good.waitForLine((l) => l.msg === "worker started", 30_000);
    expect(await eventually(() => smtp.messages.length > 0, 20_000)).toBe(true);
    expect(smtp.messages.map((m) => m.subject)).toEqual(["API key created: ci"]);
    good.kill("SIGTERM");
    expect(await good.exited).toBe(0);
    for (const p of [bad, refused, good]) expect(p.stdout() + p.stderr()).not.toContain(wrong);
    expect(good.stdout() + good.stderr()).not.toContain("right-pass-7c1e");
    expect(JSON.stringify(await services.db().sql`select * from alerts`)).not.toContain(wrong);
  } finally {
    await smtp.close();
  }
}, 120_000);
