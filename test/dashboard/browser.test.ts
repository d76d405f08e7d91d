/**
 * The dashboard in a real browser (docs/dashboard.md): Debian's chromium (its
 * headless shell, test/helpers/browser.ts) driven by playwright-core against the real app served over HTTPS on 127.0.0.1 with
 * a self-signed certificate.
 *
 * The newcomer flow: sign up → copy the key → call /v1/track with it → see
 * usage move; create a test webhook → test fire → see the delivery; upgrade
 * to Growth → create a live webhook; deactivate it by failures → reactivate
 * from the page. Screenshots go to test/artifacts/dashboard/ (git-ignored,
 * kept by CI as artifacts).
 *
 * If chromium cannot start, this file FAILS (never skips): the dashboard's
 * "done when" is that these tests pass in .ci/run.
 *
 * NETWORK SAFETY: the app, the webhook receiver and the courier simulator
 * listen on 127.0.0.1; chromium's resolver maps every other name to
 * NOTFOUND and its background networking is off.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { rateWindows, webhooks } from "../../src/db/schema/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { BROWSER_STEP_MS, launchBrowser, newBrowserContext } from "../helpers/browser.ts";
import { startReceiver, testCert, webhookEnv } from "./support.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "dashboard");
/** Per-test budget: a test is a few browser steps, each of which may take up to BROWSER_STEP_MS on a busy machine. */
const STEP_MS = 2 * BROWSER_STEP_MS;
const TRACKED = "1234567890121"; // sandbox scenario 1: in transit, followed

let ctx: TestContext;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let server: { port: number; stop(): unknown };
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
const email = `newcomer-${Bun.randomUUIDv7().slice(-6)}@example.com`;
let apiKey = "";
let liveHook = "";

const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  const { cert, key } = await testCert();
  // A real HTTPS server around the same app the HTTP tests drive in-process.
  ctx.app.listen({ port: 0, hostname: "127.0.0.1", tls: { cert, key } });
  server = { port: ctx.app.server!.port!, stop: () => ctx.app.stop(true) };
  base = `https://127.0.0.1:${server.port}`;
  browser = await launchBrowser([
    "--ignore-certificate-errors",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
  ]);
  context = await newBrowserContext(browser, { ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("dialog", (d) => void d.accept());
}, BROWSER_STEP_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rx?.stop();
  await ctx?.close();
}, 30_000);

/** GET through the real HTTPS server, trusting the test certificate. */
async function api(path: string, key: string): Promise<[number, any]> {
  const res = await fetch(`${base}${path}`, {
    headers: { "x-api-key": key },
    tls: { ca: (await testCert()).cert },
  } as RequestInit);
  return [res.status, await res.json()];
}

describe("the newcomer flow in chromium", () => {
  test(
    "sign up and copy the first API key",
    async () => {
      await page.goto(`${base}/dashboard`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
      await page.getByRole("link", { name: "Create a free account" }).click();
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill("correct horse battery staple");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.getByRole("heading", { name: "Your new API key" }).waitFor();
      const shown = await page.getByTestId("new-key").inputValue();
      expect(shown).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
      await page.getByRole("button", { name: "Copy" }).click();
      await page.getByText("Copied to the clipboard.").waitFor();
      apiKey = await page.evaluate(() => navigator.clipboard.readText());
      expect(apiKey).toBe(shown);
      await shot("01-signed-up-key");
      // Throttles key on the socket address of the real server.
      const keys = (await ctx.tdb.db.select({ key: rateWindows.key }).from(rateWindows)).map((r) => r.key);
      expect(keys).toContain("signup:ip:127.0.0.1");
    },
    STEP_MS,
  );

  test(
    "the copied key calls /v1/track and the usage moves",
    async () => {
      await page.getByRole("link", { name: "Overview" }).click();
      expect(await page.getByTestId("usage-used").textContent()).toBe("0");
      const [status, body] = await api(`/v1/track?courier=delhivery&tracking_number=${TRACKED}`, apiKey);
      expect(status).toBe(200);
      expect(body.usage).toMatchObject({ used: 1, quota: 100, plan: "free" });
      await page.reload();
      expect(await page.getByTestId("usage-used").textContent()).toBe("1");
      expect(await page.locator("progress").getAttribute("value")).toBe("1");
      await shot("02-overview-usage");
      await page.getByRole("link", { name: "Shipments" }).click();
      await page.getByRole("cell", { name: TRACKED }).waitFor();
      await shot("03-shipments");
    },
    STEP_MS,
  );

  test(
    "create a test webhook, see the secret once, test fire, see the delivery",
    async () => {
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("link", { name: "Add a webhook" }).click();
      await page.getByLabel("Endpoint URL (https)").fill(rx.url("/hook"));
      await page.getByLabel("Description (optional)").fill("<b>orders</b> receiver");
      await page.getByLabel("tracking.in_transit").check();
      await page.getByRole("button", { name: "Create webhook" }).click();
      await page.getByRole("heading", { name: "Your signing secret" }).waitFor();
      expect(await page.getByTestId("signing-secret").inputValue()).toMatch(/^whsec_/);
      await shot("04-webhook-secret");
      await page.getByRole("link", { name: "I have saved it — continue" }).click();
      expect(await page.getByTestId("webhook-description").textContent()).toBe("<b>orders</b> receiver");

      await page.getByRole("button", { name: "Send a test delivery" }).click();
      await page.getByText(/Test delivery delivered with HTTP 200/).waitFor();
      expect(rx.hits.filter((h) => h.path === "/hook")).toHaveLength(1);
      const row = page.locator("table.deliveries tbody tr").first();
      await expect(row.textContent()).resolves.toContain("HTTP 200");
      await row.getByText("Attempts").click();
      await row.getByText(/Attempt 1 at/).waitFor();
      expect(await page.getByTestId("deliveries-chart").locator("title").first().textContent()).toContain(
        "1 delivered, 0 failed",
      );
      await shot("05-webhook-delivery");
    },
    STEP_MS,
  );

  test(
    "upgrade to Growth on the billing page, then create a live webhook",
    async () => {
      await page.getByRole("link", { name: "Usage & plan" }).click();
      await shot("06-billing-free");
      await page.getByTestId("plan-growth").click();
      await page.getByText("Your plan is changed.", { exact: false }).waitFor();
      expect(await page.getByTestId("plan-name").textContent()).toBe("Growth");
      // The same key works at once with the new limits.
      const [status, body] = await api(`/v1/track?courier=delhivery&tracking_number=${TRACKED}`, apiKey);
      expect(status).toBe(200);
      expect(body.usage).toMatchObject({ quota: 150_000, plan: "growth" });

      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("link", { name: "Add a webhook" }).click();
      await page.getByLabel("Endpoint URL (https)").fill(rx.url("/live"));
      await page.getByRole("radio", { name: /Live/ }).check();
      await page.getByRole("button", { name: "Create webhook" }).click();
      await page.getByText("Webhook created.").waitFor();
      liveHook = /\/dashboard\/webhooks\/(wh_[0-9a-f]{32})/.exec(page.url())![1]!;
      expect(await page.getByRole("button", { name: "Send a test delivery" }).count()).toBe(0);
    },
    STEP_MS,
  );

  test(
    "a live webhook deactivated by failures is reactivated from the page",
    async () => {
      await ctx.tdb.db
        .update(webhooks)
        .set({ status: "deactivated", failureCount: 20 })
        .where(eq(webhooks.id, liveHook));
      await page.getByRole("link", { name: "Webhooks" }).click();
      const row = page.locator(`tr[data-webhook-id="${liveHook}"]`);
      expect(await row.getByTestId("failure-count").textContent()).toBe("20 (deactivated)");
      await expect(row.textContent()).resolves.toContain("deactivated");
      await shot("07-webhooks-deactivated");
      await row.getByRole("link").click();
      await page.getByRole("button", { name: "Reactivate" }).click();
      await page.getByText("Webhook reactivated").waitFor();
      expect(await page.getByTestId("failure-count").textContent()).toStartWith("0");
      await expect(page.getByTestId("webhook-status").textContent()).resolves.toBe("active");
      await shot("08-webhook-reactivated");
    },
    STEP_MS,
  );

  test(
    "readable on a phone: no horizontal overflow; keyboard users get a skip link",
    async () => {
      const phone = await newBrowserContext(browser, {
        ignoreHTTPSErrors: true,
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
      });
      await phone.addCookies(await context.cookies()); // the session cookie has Path=/dashboard
      const p = await phone.newPage();
      for (const [path, name] of [
        ["/dashboard", "09-phone-overview"],
        ["/dashboard/billing", "10-phone-billing"],
        ["/dashboard/webhooks", "11-phone-webhooks"],
      ] as const) {
        await p.goto(`${base}${path}`);
        expect(new URL(p.url()).pathname).toBe(path);
        // A mobile browser zooms out to show overflowing content (innerWidth grows with it): clientWidth is the 390 px given.
        const overflow = await p.evaluate(
          () =>
            document.documentElement.scrollWidth - Math.min(window.innerWidth, document.documentElement.clientWidth),
        );
        expect(overflow).toBeLessThanOrEqual(0);
        await shot(name, p);
      }
      await p.keyboard.press("Tab");
      expect(await p.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await phone.close();
    },
    STEP_MS,
  );

  test(
    "no CSP violation or script error on any page",
    () => {
      expect(problems).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "sign out ends the session",
    async () => {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByText("You are signed out.").waitFor();
      await page.goto(`${base}/dashboard/keys`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    },
    STEP_MS,
  );
});
