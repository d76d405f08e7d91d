/**
 * Process lifecycle as the probes see it, and which requests are probes.
 *
 * `starting` is true from the process's start until its public listener is up
 * (main.ts): the internal port starts first, and a `/readyz` answered 200
 * before the API listens would send traffic to a closed port.
 * `draining` turns true on SIGTERM (main.ts): `/readyz` then answers 503 so
 * load balancers stop sending new requests while in-flight ones finish.
 */
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

/**
 * True when `url` (a request URL, absolute or path-only) targets a probe.
 * Reads only the path between the authority and `?`, without `new URL`, so a
 * malformed Host header cannot make it throw.
 */
export function isProbeRequest(url: string): boolean {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? 0 : url.indexOf("/", scheme + 3);
  if (start < 0) return false;
  const q = url.indexOf("?", start);
  return PROBE_PATHS.has(url.slice(start, q < 0 ? undefined : q));
}
