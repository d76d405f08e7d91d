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
import { chromium, type Browser } from "playwright-core";

/** Where Debian's `chromium-headless-shell` package puts the binary. */
export const HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell";

/** Flags every browser test uses; `extra` adds the file's own (resolver rules, certificate errors). */
const BASE_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

/**
 * Launches the headless shell with {@link BASE_ARGS} plus `extra`.
 * @throws when the package is not installed (the browser tests must not be skipped).
 */
export async function launchBrowser(extra: string[] = []): Promise<Browser> {
  if (!existsSync(HEADLESS_SHELL)) throw new Error(`${HEADLESS_SHELL} not found: install Debian's chromium-headless-shell (.ci/run does); the browser tests must not be skipped`);
  return chromium.launch({ executablePath: HEADLESS_SHELL, headless: true, args: [...BASE_ARGS, ...extra] });
}
