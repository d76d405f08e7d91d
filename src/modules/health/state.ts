/** Process lifecycle as the probes see it: `starting` until listening, `draining` from SIGTERM. */
export interface Lifecycle {
  starting: boolean;
  draining: boolean;
}

/** A lifecycle that is ready unless told otherwise; main.ts passes `{ starting: true }` and clears it once listening. */
export function createLifecycle(init: Partial<Lifecycle> = {}): Lifecycle {
  return { starting: false, draining: false, ...init };
}

/** Paths that answer without a key and whatever `X-Forwarded-Proto` says (orchestrators probe over plain HTTP). */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/** True when `url` (absolute or path-only) targets a probe; no `new URL`, so a malformed Host cannot make it throw. */
export function isProbeRequest(url: string): boolean {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? 0 : url.indexOf("/", scheme + 3);
  if (start < 0) return false;
  const q = url.indexOf("?", start);
  return PROBE_PATHS.has(url.slice(start, q < 0 ? undefined : q));
}
