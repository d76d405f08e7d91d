/**
 * Swagger UI: Swagger UI at /docs in a real headless Chromium (Debian's
 * chromium headless shell, test/helpers/browser.ts, driven by playwright-core) against the running service, with
 * every request that is not to the service refused — the page must work
 * offline. It shows every tag, authorises with the API key, and "Try it out"
 * on /v1/couriers and /v1/track answers 200. The screenshot is kept in
 * test/artifacts/ (git-ignored; CI keeps it as an artifact).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { BROWSER_STEP_MS, launchBrowser, newBrowserContext } from "../helpers/browser.ts";
import { startService, type RunningService } from "./service.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
let svc: RunningService;
let browser: Browser;

beforeAll(async () => {
  [svc, browser] = await Promise.all([startService(), launchBrowser()]);
}, BROWSER_STEP_MS);

afterAll(async () => {
  await browser?.close();
  expect(await svc?.stop()).toBe(0);
}, 60_000);

/** Expands an operation, presses "Try it out" then "Execute", and returns the status Swagger UI shows. */
async function tryItOut(page: Page, tag: string, operationId: string): Promise<string> {
  const op = page.locator(`#operations-${tag}-${operationId}`);
  await op.locator(".opblock-summary").first().click();
  await op.locator("button.try-out__btn").click();
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor();
  return (await status.innerText()).trim();
}

test(
  "/docs works offline, shows every tag, authorises with a key and runs Try it out with 200s",
  async () => {
    const context = await newBrowserContext(browser, {
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 2000 },
    });
    const page = await context.newPage();
    const refused: string[] = [];
    await context.route("**/*", (route) => {
      if (route.request().url().startsWith(`${svc.baseUrl}/`)) return route.continue();
      refused.push(route.request().url());
      return route.abort("internetdisconnected");
    });
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));

    await page.goto(`${svc.baseUrl}/docs`);
    await page.locator("body[data-docs-ready=true]").waitFor();
    expect(await page.locator(".info .title").innerText()).toContain("Courier Tracking API");

    const doc = (await (await svc.fetch("/openapi.json")).json()) as { tags: { name: string }[] };
    const shown = await page.locator(".opblock-tag").allInnerTexts();
    for (const { name } of doc.tags)
      expect(
        shown.some((t) => t.startsWith(name)),
        `tag ${name} in ${JSON.stringify(shown)}`,
      ).toBe(true);
    // The five events sit in Swagger UI's own Webhooks section, under no extra (empty) tag heading of their own.
    expect(shown.filter((t) => !doc.tags.some(({ name }) => t.startsWith(name)))).toEqual([]);
    expect(shown.filter((t) => t.startsWith("Webhook events"))).toEqual([]);
    const webhooks = await page.locator(".webhooks").innerText();
    for (const event of [
      "tracking.updated",
      "tracking.in_transit",
      "tracking.out_for_delivery",
      "tracking.delivered",
      "tracking.exception",
    ])
      expect(webhooks).toContain(event);

    await page.locator("button.authorize").first().click();
    await page.locator(".auth-container input").first().fill(svc.key);
    await page.locator(".auth-btn-wrapper button.authorize").click();
    await page.locator(".auth-btn-wrapper button.btn-done").click();

    expect(await tryItOut(page, "Couriers", "listCouriers")).toBe("200");
    expect(await tryItOut(page, "Tracking", "trackShipment")).toBe("200");
    const body = await page
      .locator("#operations-Tracking-trackShipment .live-responses-table .response-col_description pre")
      .first()
      .innerText();
    expect(JSON.parse(body).data.ShipmentState).toBe("delivered");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "swagger-ui.png"), fullPage: true });
    expect(refused).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  },
  4 * BROWSER_STEP_MS,
);
