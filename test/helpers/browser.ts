/**
 * The browser of the browser tests: Debian's `chromium-headless-shell`
 * (the headless-only build of the chromium package, which Playwright itself
 * uses for headless runs) driven by playwright-core. `chromium --headless`
 * runs the full browser with its own UI renderer hidden; for the same pages
 * and assertions the shell took about half the CPU (the three browser files:
 * 65 → 36 s of machine time), and the test suite is CPU-bound on 2 cores.
 *
 * If the browser cannot start, the calling file FAILS (never skips): `.ci/run`
 * installs the package with apt.
 *
 * NETWORK SAFETY: background networking, component updates and sync are off;
 * callers add `--host-resolver-rules` so no name but loopback resolves.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from "playwright-core";

/** Where Debian's `chromium-headless-shell` package puts the binary. */
export const HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell";

/**
 * How long one browser step may take (a navigation, a click, waiting for an element), ms. Playwright's own
 * default is 30 s; the suite runs six files at once on 2 cores, and there the headless shell took 14 s to
 * render Swagger UI's page that takes 3 s alone. A step that never completes still fails, after this long.
 */
export const BROWSER_STEP_MS = 60_000;

/** Flags every browser test uses; `extra` adds the file's own (resolver rules, certificate errors). */
const BASE_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/**
 * Launches the headless shell with {@link BASE_ARGS} plus `extra`.
 * @throws when the package is not installed (the browser tests must not be skipped).
 */
export async function launchBrowser(extra: string[] = []): Promise<Browser> {
  if (!existsSync(HEADLESS_SHELL))
    throw new Error(
      `${HEADLESS_SHELL} not found: install Debian's chromium-headless-shell (.ci/run does); the browser tests must not be skipped`,
    );
  return chromium.launch({
    executablePath: HEADLESS_SHELL,
    headless: true,
    args: [...BASE_ARGS, ...extra],
    timeout: BROWSER_STEP_MS,
  });
}

/** A new context of `browser` (options as Playwright's) whose steps wait up to {@link BROWSER_STEP_MS}. */
export async function newBrowserContext(browser: Browser, options: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(BROWSER_STEP_MS);
  context.setDefaultNavigationTimeout(BROWSER_STEP_MS);
  return context;
}
