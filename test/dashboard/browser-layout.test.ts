/**
 * Every dashboard page at a phone's 390×844 and a laptop's 1280×800 in a real browser (Debian's chromium headless
 * shell, test/helpers/browser.ts) with a realistic data set (test/dashboard/layout-seed.ts: long webhook URLs,
 * 50 shipments, 30 attempts), every `<details>` opened:
 *
 * - the page never scrolls sideways and no element's box leaves the viewport horizontally;
 * - every control (link, button, input, select, summary) is rendered and not clipped by a scroll box;
 * - axe-core finds no serious or critical violation;
 * - at 1280 px the attempt log gets the width of the card, not a squeezed column.
 *
 * Screenshots of the viewport go to a temporary folder whose path the test prints. If chromium cannot start,
 * this file FAILS (never skips).
 *
 * NETWORK SAFETY: the app listens on 127.0.0.1; chromium resolves no other name and its background networking is
 * off; the seeded webhook URLs are never contacted (no delivery worker runs).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { accounts, deliveries, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { BROWSER_STEP_MS, launchBrowser, newBrowserContext } from "../helpers/browser.ts";
import { seedRealistic, type Seeded } from "./layout-seed.ts";
import { Client, testCert } from "./support.ts";

const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const SHOTS = mkdtempSync(join(tmpdir(), "dashboard-layout-"));
const EMAIL = `layout-${Bun.randomUUIDv7().slice(-6)}@merchant-with-a-rather-long-domain-name.example.com`;
const PASSWORD = "correct horse battery";

let ctx: TestContext;
let base: string;
let browser: Browser;
/**
 * axe-core, served from loopback as a cacheable script: chromium then compiles it once, not on each of the ~40
 * pages (injected as inline text it cost 7 s of CPU per run, and its runs 3 s more without the compiled code).
 */
let axeServer: ReturnType<typeof Bun.serve> | undefined;
let axeUrl: string;
let seeded: Seeded;
const problems: string[] = [];

beforeAll(async () => {
  ctx = await testContext();
  const { cert, key } = await testCert();
  ctx.app.listen({ port: 0, hostname: "127.0.0.1", tls: { cert, key } });
  base = `https://127.0.0.1:${ctx.app.server!.port}`;
  await new Client(ctx.app).signUp(EMAIL, PASSWORD);
  const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, EMAIL));
  seeded = await seedRealistic(ctx, acc!.id);
  axeServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    fetch: () =>
      new Response(AXE, { headers: { "content-type": "text/javascript", "cache-control": "public, max-age=3600" } }),
  });
  axeUrl = `https://127.0.0.1:${axeServer.port}/axe.min.js`;
  browser = await launchBrowser([
    "--ignore-certificate-errors",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
  ]);
  console.log(`dashboard layout screenshots: ${SHOTS}`);
}, 2 * BROWSER_STEP_MS);

afterAll(async () => {
  await browser?.close();
  axeServer?.stop(true);
  await ctx?.app.stop(true);
  await ctx?.close();
}, 30_000);

const pages = (): [string, string][] => [
  ["overview", "/dashboard"],
  ["keys", "/dashboard/keys"],
  ["billing", "/dashboard/billing"],
  ["webhooks", "/dashboard/webhooks"],
  ["webhook-new", "/dashboard/webhooks/new"],
  ["webhook-detail", `/dashboard/webhooks/${seeded.busy}`],
  ["webhook-deactivated", `/dashboard/webhooks/${seeded.hooks[1]!}`],
  [
    "webhook-filtered",
    `/dashboard/webhooks/${seeded.busy}?status=abandoned&event_type=tracking.in_transit&since=2026-11-01&until=2026-11-30`,
  ],
  [
    "webhook-audit",
    `/dashboard/webhooks/${seeded.busy}?audit=${encodeURIComponent("200~p,401~p,200~f,address_blocked~f")}`,
  ],
  ["webhook-edit", `/dashboard/webhooks/${seeded.busy}/edit`],
  ["webhook-delete", `/dashboard/webhooks/${seeded.busy}/delete`],
  ["rotate-secret", "/dashboard/webhooks/rotate-secret"],
  ["shipments", "/dashboard/shipments"],
  ["shipments-filtered", "/dashboard/shipments?state=exception&reason=address_issue&courier=dtdc"],
  ["profile", "/dashboard/profile"],
  ["alerts", "/dashboard/alerts"],
  ["not-found", "/dashboard/no-such-page"],
];

/** Boxes outside [0, width] and controls that are not rendered or are clipped by an ancestor; as text lines. */
function layoutProblems(): string[] {
  const width = document.documentElement.clientWidth;
  const out: string[] = [];
  const name = (e: Element) =>
    `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className && typeof e.className === "string" ? `.${e.className.trim().split(/\s+/).join(".")}` : ""} "${(e.textContent ?? "").trim().slice(0, 40)}"`;
  // Visually hidden content (inside a box of at most 1 px that clips it: .sr-only, a table's header row on a phone)
  // and the skip link (on screen when focused) are off screen on purpose.
  const hiddenOnPurpose = (e: Element) => {
    if (e.closest(".skip")) return true;
    for (let a: Element | null = e; a; a = a.parentElement)
      if (a.getBoundingClientRect().width <= 1 && getComputedStyle(a).overflow === "hidden") return true;
    return false;
  };
  if (document.documentElement.scrollWidth > width)
    out.push(`page is ${document.documentElement.scrollWidth} px wide in ${width}`);
  for (const e of document.querySelectorAll("body *")) {
    if (hiddenOnPurpose(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -0.5 || r.right > width + 0.5)
      out.push(`outside the viewport (${Math.round(r.left)}–${Math.round(r.right)}): ${name(e)}`);
  }
  for (const c of document.querySelectorAll("a, button, input:not([type=hidden]), select, summary")) {
    if (c.classList.contains("skip")) continue;
    const r = c.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) {
      out.push(`control not rendered: ${name(c)}`);
      continue;
    }
    for (let a = c.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX === "visible") continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5)
        out.push(`control clipped by ${name(a).slice(0, 30)}: ${name(c)}`);
    }
  }
  return out;
}

async function check(p: Page, label: string, path: string, width: number): Promise<void> {
  const res = await p.goto(`${base}${path}`);
  expect(res?.status(), path).toBeLessThan(path.includes("no-such") ? 500 : 300);
  await audit(p, label, path, width);
}

/** The layout and axe checks and a screenshot of the page `p` shows now. */
async function audit(p: Page, label: string, path: string, width: number): Promise<void> {
  await p.evaluate(() =>
    document.querySelectorAll("details").forEach((d) => {
      d.setAttribute("open", "");
    }),
  );
  expect(await p.evaluate(layoutProblems), `${path} at ${width} px`).toEqual([]);
  await p.addScriptTag({ url: axeUrl });
  const found = await p.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe.run();
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  expect(found, `axe on ${path} at ${width} px`).toEqual([]);
  await p.screenshot({ path: join(SHOTS, `${label}-${width}.png`) });
}

describe("every dashboard page fits the screen and passes axe", () => {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    test(
      `at ${width}×${height}`,
      async () => {
        // The axe script comes from another origin: the test's context lifts the page's CSP for it.
        const c = await newBrowserContext(browser, {
          ignoreHTTPSErrors: true,
          bypassCSP: true,
          viewport: { width, height },
          ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
        });
        const p = await c.newPage();
        p.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
        for (const [label, path] of [
          ["sign-in", "/dashboard/sign-in"],
          ["sign-up", "/dashboard/sign-up"],
        ] as const)
          await check(p, label, path, width);
        await p.goto(`${base}/dashboard/sign-in`);
        await p.getByLabel("Email").fill(EMAIL);
        await p.getByLabel("Password").fill(PASSWORD);
        await p.getByRole("button", { name: "Sign in" }).click();
        await p.waitForURL(`${base}/dashboard`);
        for (const [label, path] of pages()) await check(p, label, path, width);
        // Following from a pasted list as a merchant does: the per-item results above the list.
        await p.goto(`${base}/dashboard/shipments`);
        await p
          .getByLabel("Paste a list")
          .fill(
            [
              "delhivery,1234567890120,ORDER-2026-11-55501",
              "bluedart,12AB",
              "ekart,FMPC1234567890",
              "delhivery,1234567890120",
            ].join("\n"),
          );
        await p.getByRole("button", { name: "Follow" }).click();
        await p.getByTestId("follow-summary").waitFor();
        expect(await p.getByTestId("follow-summary").textContent()).toBe("2 accepted, 2 invalid, 0 over the quota.");
        await audit(p, "shipments-follow-results", "/dashboard/shipments/follow", width);
        // The whole overview (usage by day, needs action, deliveries, states) for docs/screenshots.
        await p.goto(`${base}/dashboard`);
        await p.screenshot({ path: join(SHOTS, `overview-full-${width}.png`), fullPage: true });
        // The attempt log of the first delivery, opened as a user opens it.
        await p.goto(`${base}/dashboard/webhooks/${seeded.busy}`);
        await p.locator("table.deliveries tbody tr").first().getByText("Attempts").click();
        const log = p.locator("table.deliveries ol.attempts").first();
        await log.scrollIntoViewIfNeeded();
        await p.screenshot({ path: join(SHOTS, `webhook-attempts-${width}.png`) });
        // The log takes the card's width (about 1 100 px at 1280), not one column of the table.
        expect((await log.boundingBox())!.width).toBeGreaterThan(width >= 1280 ? 900 : 300);
        await c.close();
        expect(problems).toEqual([]);
      },
      40 * BROWSER_STEP_MS,
    );
  }
});

/** What the test reads off one chart: its box, its labels' rendered size, and its bars. */
interface ChartSeen {
  width: number;
  height: number;
  /** Each label's text and its rendered size in CSS px (font size × the SVG's scale on screen). */
  labels: [string, number][];
  /** Each bar's title, class and rendered height in CSS px. */
  bars: [string, string, number][];
}

function readChart(testid: string): ChartSeen {
  const svg = document.querySelector<SVGSVGElement>(`[data-testid="${testid}"]`)!;
  const box = svg.getBoundingClientRect();
  const labels = [...svg.querySelectorAll<SVGTextElement>("text")].map((t): [string, number] => [
    t.textContent ?? "",
    Number.parseFloat(getComputedStyle(t).fontSize) * (t.getScreenCTM()?.a ?? 0),
  ]);
  const bars = [...svg.querySelectorAll<SVGRectElement>("rect")].map((r): [string, string, number] => [
    r.parentElement?.querySelector("title")?.textContent ?? "",
    r.getAttribute("class") ?? "",
    r.getBoundingClientRect().height,
  ]);
  return { width: box.width, height: box.height, labels, bars };
}

describe("the overview's two charts at 390 px, with small values", () => {
  test(
    "usage by day and delivery success by day render, their labels are at least 11 px, a 1 among 0s has a visible bar",
    async () => {
      const email = `charts-${Bun.randomUUIDv7().slice(-6)}@example.com`;
      await new Client(ctx.app).signUp(email, PASSWORD);
      const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email));
      const db = ctx.tdb.db;
      const now = ctx.clock.now();
      // Growth: a quota of 150,000 against which 1 request is 0.001 px of a plain scale.
      await db.update(accounts).set({ plan: "growth" }).where(eq(accounts.id, acc!.id));
      await setUsage(db, acc!.id, 1, now);
      const hook = newId("wh");
      await db.insert(webhooks).values({
        id: hook,
        accountId: acc!.id,
        url: "https://example.com/hook",
        events: ["tracking.delivered"],
        mode: "test",
      });
      const row = (state: string, daysAgo: number) => ({
        id: newId("dlv"),
        webhookId: hook,
        accountId: acc!.id,
        eventType: "tracking.delivered",
        mode: "test",
        state,
        attempts: 1,
        enqueuedAt: new Date(now - daysAgo * 86_400_000),
      });
      // Three days ago one failure alone; yesterday one failure among 400 deliveries (0.25 %: 0.4 px by plain scale).
      await db
        .insert(deliveries)
        .values([row("abandoned", 3), ...Array.from({ length: 400 }, () => row("delivered", 1)), row("dropped", 1)]);

      const c = await newBrowserContext(browser, {
        ignoreHTTPSErrors: true,
        bypassCSP: true,
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
      });
      const p = await c.newPage();
      await p.goto(`${base}/dashboard/sign-in`);
      await p.getByLabel("Email").fill(email);
      await p.getByLabel("Password").fill(PASSWORD);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.waitForURL(`${base}/dashboard`);
      const usage = await p.evaluate(readChart, "usage-chart");
      const success = await p.evaluate(readChart, "success-chart");
      for (const [name, chart] of [
        ["usage", usage],
        ["success", success],
      ] as const) {
        expect(chart.width, `${name} chart width`).toBeGreaterThan(300);
        expect(chart.height, `${name} chart height`).toBeGreaterThanOrEqual(150);
        expect(chart.labels.length, `${name} chart labels`).toBeGreaterThanOrEqual(3);
        for (const [label, px] of chart.labels) expect(px, `${name} chart label "${label}"`).toBeGreaterThanOrEqual(11);
      }
      // The usage bars: 0 on the 1st to the 4th (no bar drawn tall), 1 so far today.
      const today = usage.bars.find(([t]) => t.endsWith("1 that day, 1 so far"));
      expect(today?.[2]).toBeGreaterThanOrEqual(2);
      expect(usage.bars.filter(([t]) => t.endsWith(", 0 so far")).every(([, , h]) => h === 0)).toBe(true);
      const dayOf = (daysAgo: number) => new Date(now - daysAgo * 86_400_000).toISOString().slice(0, 10);
      const bar = (daysAgo: number, cls: string) =>
        success.bars.find(([t, c]) => t.startsWith(`${dayOf(daysAgo)}:`) && c === cls)?.[2] ?? 0;
      expect(bar(3, "bar-bad")).toBeGreaterThan(100); // 1 failed, 0 delivered: the whole bar
      expect(bar(1, "bar-bad")).toBeGreaterThanOrEqual(2); // 1 failed among 400 delivered: still seen
      expect(bar(1, "bar-ok")).toBeGreaterThan(100);
      expect(success.bars.filter(([, c]) => c.startsWith("bar")).length).toBe(3);
      // The webhook's own 14-day chart: the same labels and minimum heights.
      await p.goto(`${base}/dashboard/webhooks/${hook}`);
      const perHook = await p.evaluate(readChart, "deliveries-chart");
      expect(perHook.width).toBeGreaterThan(300);
      for (const [label, px] of perHook.labels) expect(px, `webhook chart label "${label}"`).toBeGreaterThanOrEqual(11);
      const failedYesterday = perHook.bars.find(([t, c]) => t.startsWith(`${dayOf(1)}:`) && c === "bar-bad");
      expect(failedYesterday?.[2]).toBeGreaterThanOrEqual(2);
      await p.goto(`${base}/dashboard`);
      for (const card of ["proj-h", "health-h"])
        await p
          .locator(`section[aria-labelledby="${card}"]`)
          .screenshot({ path: join(SHOTS, `chart-${card}-390.png`) });
      await audit(p, "overview-small-values", "/dashboard", 390);
      await c.close();
    },
    10 * BROWSER_STEP_MS,
  );
});
