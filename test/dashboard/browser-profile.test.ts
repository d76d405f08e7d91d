/**
 * The dashboard's edges in a real browser (Debian's chromium headless shell,
 * test/helpers/browser.ts, driven by playwright-core) against the real service started as `bun start` starts
 * it (a child process on a fresh database, sandbox couriers):
 *
 * - the development account's one-time link printed at the first start sets
 *   a password and signs in; `dev@localhost` then signs in normally;
 * - recent deliveries name their tracking number; a deactivated webhook's
 *   failure count reads "20 (deactivated)" however many in-flight failures
 *   were counted after it;
 * - every page fits a 390 px wide phone with no horizontal scroll;
 * - password change, a reset link from the operator CLI, email change and
 *   account deletion with its data.
 *
 * If chromium cannot start, this file FAILS (never skips). Screenshots go to
 * test/artifacts/dashboard/ (git-ignored).
 *
 * NETWORK SAFETY: the service, its courier simulator and the webhook
 * receiver listen on 127.0.0.1; chromium resolves no other name and its
 * background networking is off.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { accounts, deliveries, shipments, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { runCli } from "../../src/cli/admin.ts";
import { loadConfig } from "../../src/configure.ts";
import { startService, type RunningService } from "../client/service.ts";
import { BROWSER_STEP_MS, launchBrowser, newBrowserContext } from "../helpers/browser.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startReceiver, testCert, type Receiver } from "../webhooks/receiver.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "dashboard");
/** Per-test budget: a test is a few browser steps, each of which may take up to BROWSER_STEP_MS on a busy machine. */
const STEP_MS = 2 * BROWSER_STEP_MS;
const DEV = "dev@localhost";
const PASSWORD = "a long sandbox passphrase";

let tdb: TestDatabase;
let svc: RunningService;
let rx: Receiver;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
let password = PASSWORD;
let email = DEV;
const hooks = { test: "", live: "" };

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const { caFile } = await testCert();
  tdb = await createTestDatabase({ max: 2 });
  [svc, rx] = await Promise.all([
    startService(
      { WEBHOOK_CA_FILE: caFile, WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8,::1/128", BILLING_PROVIDER: "sandbox" },
      30_000,
      { tdb, expectKey: true },
    ),
    startReceiver(),
  ]);
  browser = await launchBrowser([
    "--ignore-certificate-errors",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
  ]);
  context = await newContext(1280);
  page = await context.newPage();
}, BROWSER_STEP_MS);

afterAll(async () => {
  await browser?.close();
  expect(await svc?.stop()).toBe(0);
  rx?.stop();
  await tdb?.drop();
}, 30_000);

async function newContext(width: number): Promise<BrowserContext> {
  const c = await newBrowserContext(browser, {
    ignoreHTTPSErrors: true,
    viewport: { width, height: 900 },
    ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
  });
  c.on("page", (p) => {
    // The 4xx answers this file provokes on purpose show up as "Failed to load resource"; anything else is a problem.
    p.on(
      "console",
      (m) =>
        m.type() === "error" &&
        !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()) &&
        problems.push(`console: ${m.text()}`),
    );
    p.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  });
  return c;
}

const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const api = (path: string, init: RequestInit = {}) =>
  svc.fetch(path, {
    ...init,
    headers: { "x-api-key": svc.key, "content-type": "application/json", ...(init.headers ?? {}) },
  });

async function signIn(p: Page, as: string, pw: string): Promise<void> {
  await p.goto(`${svc.baseUrl}/dashboard/sign-in`);
  await p.getByLabel("Email").fill(as);
  await p.getByLabel("Password").fill(pw);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${svc.baseUrl}/dashboard`);
}

async function signOut(p: Page): Promise<void> {
  await p.getByRole("button", { name: "Sign out" }).click();
  await p.getByText("You are signed out.").waitFor();
}

/**
 * `bun run admin password-link <account>` on the service's database: the printed URL. The CLI's entry runs in this
 * process (the CLI as a process is test/cli/admin.test.ts's subject), which saves a start of about 1,000 modules.
 */
async function cliPasswordLink(account: string): Promise<string> {
  let out = "";
  const code = await runCli(
    ["password-link", account],
    () =>
      loadConfig({
        ...process.env,
        DATABASE_URL: tdb.url,
        PUBLIC_BASE_URL: svc.baseUrl,
        COURIER_MODE: "sandbox",
        LOG_LEVEL: "silent",
      }),
    { out: (line) => (out += `${line}\n`), err: (line) => console.error(line) },
  );
  expect(code).toBe(0);
  const printed = JSON.parse(out) as { url: string; email: string; expires_at: string };
  expect(printed.email).toBe(account);
  return printed.url;
}

describe("the dashboard's edges in chromium", () => {
  test(
    "the first start prints a one-time link that lets dev@localhost set a password and sign in",
    async () => {
      const line = svc
        .stdout()
        .split("\n")
        .find((l) => l.includes("one-time link"));
      expect(line, svc.stdout()).toBeDefined();
      const link = /(https:\/\/\S+\/dashboard\/password-link\/[A-Za-z0-9_-]{43})/.exec(JSON.parse(line!).msg)?.[1];
      expect(link).toStartWith(`${svc.baseUrl}/dashboard/password-link/`);

      await page.goto(link!);
      expect(await page.getByTestId("link-email").textContent()).toBe(DEV);
      await page.getByLabel("New password", { exact: true }).fill("short");
      await page.getByLabel("New password again").fill("short");
      await page.getByRole("button", { name: "Set password and sign in" }).click();
      await page.getByText("Use 10 to 128 characters.").waitFor();
      await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
      await page.getByLabel("New password again").fill(PASSWORD);
      await page.getByRole("button", { name: "Set password and sign in" }).click();
      await page.getByText("Your password is set and you are signed in.").waitFor();
      expect(await page.getByTestId("account-email").textContent()).toBe(DEV);
      await shot("20-dev-password-set");

      // Single use: the same link is refused now.
      const again = await page.goto(link!);
      expect(again!.status()).toBe(404);
      await page.getByText("This password link is unknown, already used or expired.").waitFor();

      await page.goto(`${svc.baseUrl}/dashboard`);
      await signOut(page);
      await signIn(page, DEV, PASSWORD);
      expect(await page.getByTestId("account-email").textContent()).toBe(DEV);
    },
    STEP_MS,
  );

  test(
    "recent deliveries show the tracking number; a deactivated webhook reads 20 (deactivated)",
    async () => {
      const created = async (body: unknown) =>
        (
          (await (await api("/v1/webhooks", { method: "POST", body: JSON.stringify(body) })).json()) as {
            data: { id: string };
          }
        ).data.id;
      hooks.test = await created({ url: rx.url("/test"), events: ["tracking.delivered"], mode: "test" });
      hooks.live = await created({ url: rx.url("/live"), events: ["tracking.delivered"], mode: "live" });
      expect((await api(`/v1/webhooks/${hooks.test}/test`, { method: "POST" })).status).toBe(200);
      const tracked = await api("/v1/track?courier=bluedart&tracking_number=50112345671");
      expect(tracked.status).toBe(200);

      // A live delivery about the tracked shipment, as the outbox records one; then the webhook is deactivated with
      // four more failures counted by deliveries that were in flight at that moment.
      const [acc] = await tdb.db.select().from(accounts).where(eq(accounts.email, DEV));
      const [shp] = await tdb.db.select().from(shipments).where(eq(shipments.trackingNumber, "50112345671"));
      await tdb.db.insert(deliveries).values({
        id: newId("dlv"),
        webhookId: hooks.live,
        accountId: acc!.id,
        shipmentId: shp!.id,
        eventType: "tracking.delivered",
        mode: "live",
        state: "abandoned",
        attempts: 6,
        enqueuedAt: new Date(),
        lastStatusCode: 500,
      });
      await tdb.db.update(webhooks).set({ status: "deactivated", failureCount: 24 }).where(eq(webhooks.id, hooks.live));

      await page.goto(`${svc.baseUrl}/dashboard/webhooks`);
      expect(await page.locator(`tr[data-webhook-id="${hooks.live}"]`).getByTestId("failure-count").textContent()).toBe(
        "20 (deactivated)",
      );
      await page.goto(`${svc.baseUrl}/dashboard/webhooks/${hooks.live}`);
      expect(await page.getByTestId("failure-count").textContent()).toBe("20 (deactivated)");
      expect(await page.getByTestId("delivery-shipment").first().innerText()).toBe("50112345671\nbluedart");

      await page.goto(`${svc.baseUrl}/dashboard/webhooks/${hooks.test}`);
      const sample = (await page.getByTestId("delivery-shipment").first().innerText()).split("\n");
      expect(sample).toEqual(["1234567890120", "synthetic-test-delhivery"]);
      await shot("21-recent-deliveries-tracking-number");
    },
    STEP_MS,
  );

  test(
    "every page fits a 390 px wide phone: no horizontal scroll",
    async () => {
      const phone = await newContext(390);
      await phone.addCookies(await context.cookies());
      const p = await phone.newPage();
      const signedIn = [
        "/dashboard",
        "/dashboard/keys",
        "/dashboard/billing",
        "/dashboard/webhooks",
        "/dashboard/webhooks/new",
        `/dashboard/webhooks/${hooks.test}`,
        `/dashboard/webhooks/${hooks.live}`,
        `/dashboard/webhooks/${hooks.test}/edit`,
        `/dashboard/webhooks/${hooks.test}/delete`,
        "/dashboard/webhooks/rotate-secret",
        "/dashboard/shipments",
        "/dashboard/profile",
        "/dashboard/no-such-page",
      ];
      const anonymous = ["/dashboard/sign-in", "/dashboard/sign-up", new URL(await cliPasswordLink(DEV)).pathname];
      const wide: string[] = [];
      const measure = async (q: Page, path: string) => {
        await q.goto(`${svc.baseUrl}${path}`);
        // Expanded attempt logs count too.
        await q.evaluate(() =>
          document.querySelectorAll("details").forEach((d) => {
            d.setAttribute("open", "");
          }),
        );
        // A mobile browser zooms out to show overflowing content, which widens innerWidth with it: compare with the
        // 390 px the page was given as well.
        const [scroll, inner, client] = await q.evaluate(() => [
          document.scrollingElement!.scrollWidth,
          window.innerWidth,
          document.documentElement.clientWidth,
        ]);
        if (scroll > Math.min(inner, client, 390) || inner > 390)
          wide.push(`${path}: ${scroll} px wide, innerWidth ${inner}, clientWidth ${client}`);
        await shot(`phone${path.replaceAll("/", "-")}`.slice(0, 80), q);
      };
      for (const path of signedIn) await measure(p, path);
      const anon = await newContext(390);
      const a = await anon.newPage();
      for (const path of anonymous) await measure(a, path);
      expect(wide).toEqual([]);
      await phone.close();
      await anon.close();
    },
    STEP_MS * 2,
  );

  test(
    "password change: the current password is checked and other browsers are signed out",
    async () => {
      const other = await newContext(1280);
      const o = await other.newPage();
      await signIn(o, DEV, password);

      await page.goto(`${svc.baseUrl}/dashboard/profile`);
      const form = page.locator('form[action="/dashboard/profile/password"]');
      await form.getByLabel("Current password").fill("not it at all");
      await form.getByLabel("New password", { exact: true }).fill("another long password");
      await form.getByLabel("New password again").fill("another long password");
      await form.getByRole("button", { name: "Change password" }).click();
      await page.getByText("The current password is incorrect.").waitFor();
      await page.locator('form[action="/dashboard/profile/password"]').getByLabel("Current password").fill(password);
      await page
        .locator('form[action="/dashboard/profile/password"]')
        .getByLabel("New password", { exact: true })
        .fill("another long password");
      await page
        .locator('form[action="/dashboard/profile/password"]')
        .getByLabel("New password again")
        .fill("another long password");
      await page.getByRole("button", { name: "Change password" }).click();
      await page.getByText("Your password is changed.").waitFor();
      password = "another long password";

      await o.goto(`${svc.baseUrl}/dashboard/keys`);
      expect(new URL(o.url()).pathname).toBe("/dashboard/sign-in");
      await other.close();
      await page.goto(`${svc.baseUrl}/dashboard/keys`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/keys");
    },
    STEP_MS,
  );

  test(
    "a reset link from the operator CLI sets a new password once and signs out every session",
    async () => {
      const link = await cliPasswordLink(DEV);
      const other = await newContext(1280);
      const o = await other.newPage();
      await o.goto(link);
      await o.getByLabel("New password", { exact: true }).fill("reset long password");
      await o.getByLabel("New password again").fill("reset long password");
      await o.getByRole("button", { name: "Set password and sign in" }).click();
      await o.getByText("Your password is set and you are signed in.").waitFor();
      password = "reset long password";
      await other.close();

      await page.goto(`${svc.baseUrl}/dashboard/keys`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
      await signIn(page, DEV, password);
    },
    STEP_MS,
  );

  test(
    "email change: a taken or malformed address is refused; the new one signs in",
    async () => {
      const other = `someone-${Bun.randomUUIDv7().slice(-6)}@example.com`;
      await api("/v1/couriers"); // the key still works throughout
      await tdb.db.insert(accounts).values({ id: newId("acc"), email: other, plan: "free" });
      await page.goto(`${svc.baseUrl}/dashboard/profile`);
      const form = () => page.locator('form[action="/dashboard/profile/email"]');
      await form().getByLabel("New email").fill(other);
      await form().getByLabel("Current password").fill(password);
      await form().getByRole("button", { name: "Change email" }).click();
      await page.getByText("This email cannot be used. Choose another one.").waitFor();
      await form().getByLabel("New email").fill("not an address");
      await form().getByLabel("Current password").fill(password);
      await form().getByRole("button", { name: "Change email" }).click();
      await page.getByText("Enter a valid email address.").waitFor();

      email = `Renamed-${Bun.randomUUIDv7().slice(-6)}@Example.com`;
      await form().getByLabel("New email").fill(email);
      await form().getByLabel("Current password").fill(password);
      await form().getByRole("button", { name: "Change email" }).click();
      await page.getByText("Your email is changed").waitFor();
      email = email.toLowerCase();
      expect(await page.getByTestId("account-email").textContent()).toBe(email);
      await signOut(page);
      await signIn(page, email, password);
    },
    STEP_MS,
  );

  test(
    "account deletion: refused on a paid plan, confirmed with the password, and the data is gone",
    async () => {
      await page.goto(`${svc.baseUrl}/dashboard/profile`);
      await page.getByText("The account is on a paid plan.").waitFor();
      const [acc] = await tdb.db.select().from(accounts).where(eq(accounts.email, email));
      await tdb.db.update(accounts).set({ plan: "free" }).where(eq(accounts.id, acc!.id));

      await page.goto(`${svc.baseUrl}/dashboard/profile`);
      await page.getByRole("link", { name: "Delete the account…" }).click();
      await page.getByLabel("Current password").fill("wrong password here");
      await page.getByRole("button", { name: "Delete the account and its data" }).click();
      await page.getByText("The current password is incorrect.").waitFor();
      await page.getByLabel("Current password").fill(password);
      await page.getByRole("button", { name: "Delete the account and its data" }).click();
      await page.getByRole("heading", { name: "Account deleted" }).waitFor();
      await shot("22-account-deleted");

      expect((await api("/v1/couriers")).status).toBe(401);
      expect(await tdb.db.select().from(accounts).where(eq(accounts.id, acc!.id))).toEqual([]);
      expect(await tdb.db.select().from(webhooks).where(eq(webhooks.accountId, acc!.id))).toEqual([]);
      expect(await tdb.db.select().from(deliveries).where(eq(deliveries.accountId, acc!.id))).toEqual([]);
      // The shipment only this account followed is gone with it.
      expect(await tdb.db.select().from(shipments).where(eq(shipments.trackingNumber, "50112345671"))).toEqual([]);
      await page.goto(`${svc.baseUrl}/dashboard`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    },
    STEP_MS,
  );

  test("no CSP violation or script error on any page", () => {
    expect(problems).toEqual([]);
  });
});
