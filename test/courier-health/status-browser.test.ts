/**
 * `/status` in a real browser (Debian's chromium headless shell, test/helpers/browser.ts) at a phone's 390×844 and a
 * laptop's 1280×800, with an incident on the page: no sideways scrolling, no box outside the viewport, axe-core
 * finds no serious or critical violation, and the page works with JavaScript off. FAILS (never skips) without
 * chromium. NETWORK SAFETY: the app listens on 127.0.0.1 and chromium resolves no other name.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { testContext, type TestContext } from "../helpers/app.ts";
import { BROWSER_STEP_MS, launchBrowser, newBrowserContext } from "../helpers/browser.ts";
import { scriptMinutes } from "./script.ts";

const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
let ctx: TestContext;
let base: string;
let browser: Browser;

beforeAll(async () => {
  ctx = await testContext();
  ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 30));
  await scriptMinutes(ctx, "delhivery", 2, { ok: 30 });
  await scriptMinutes(ctx, "delhivery", 12, { ok: 20, server_error: 10 });
  await scriptMinutes(ctx, "dtdc", 3, { ok: 25, not_found: 5 }, 2500);
  ctx.app.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${ctx.app.server!.port}`;
  browser = await launchBrowser(["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]);
}, 2 * BROWSER_STEP_MS);

afterAll(async () => {
  await browser?.close();
  await ctx?.app.stop(true);
  await ctx?.close();
}, 30_000);

function outside(): string[] {
  const width = document.documentElement.clientWidth;
  const out: string[] = [];
  if (document.documentElement.scrollWidth > width) out.push(`page is ${document.documentElement.scrollWidth} px wide`);
  for (const e of document.querySelectorAll("body *")) {
    if (e.closest(".skip")) continue;
    const r = e.getBoundingClientRect();
    if ((r.width > 0 || r.height > 0) && (r.left < -0.5 || r.right > width + 0.5))
      out.push(
        `${e.tagName} "${(e.textContent ?? "").trim().slice(0, 30)}" at ${Math.round(r.left)}–${Math.round(r.right)}`,
      );
  }
  return out;
}

for (const [width, height] of [
  [390, 844],
  [1280, 800],
] as const)
  test(
    `/status fits ${width} px, passes axe, and needs no JavaScript`,
    async () => {
      const c = await newBrowserContext(browser, {
        viewport: { width, height },
        javaScriptEnabled: false,
        ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
      });
      const p = await c.newPage();
      const res = await p.goto(`${base}/status`);
      expect(res?.status()).toBe(200);
      await expect(p.getByTestId("courier-delhivery").getByTestId("state").textContent()).resolves.toBe("Degraded");
      await expect(p.getByTestId("incidents").textContent()).resolves.toContain("ongoing");
      await c.close();
      // axe needs script: the same page in a context with JavaScript on (the page itself has none).
      const js = await newBrowserContext(browser, { viewport: { width, height }, bypassCSP: true });
      const q = await js.newPage();
      await q.goto(`${base}/status`);
      expect(await q.evaluate(outside)).toEqual([]);
      await q.addScriptTag({ content: AXE });
      const found = await q.evaluate(async () => {
        const r = await (
          window as unknown as {
            axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
          }
        ).axe.run();
        return r.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      });
      expect(found).toEqual([]);
      await js.close();
    },
    2 * BROWSER_STEP_MS,
  );
