/**
 * Process lifecycle as the probes see it, and which requests are probes.
 *
 * `draining` turns true on SIGTERM (main.ts): `/readyz` then answers 503 so
 * load balancers stop sending new requests while in-flight ones finish.
 */
export interface Lifecycle {
  draining: boolean;
}

export function createLifecycle(): Lifecycle {
  return { draining: false };
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
