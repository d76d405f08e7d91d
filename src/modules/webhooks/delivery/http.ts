/**
 * One delivery attempt over HTTPS, with the address check before every hop (spec: Events, Delivery rules 1, 3, 6).
 * Each connection is pinned to the vetted address (no DNS rebinding) through real undici's `connect.lookup`
 * (Bun's `undici` shim ignores it). Why: docs/webhooks.md#address-check.
 */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type * as undici from "undici/index.js";
import type { Clock } from "../../../lib/clock.ts";
import { checkHost, type Resolver } from "./address-guard.ts";
import { exchange } from "./exchange.ts";
import { ECHO_LOOPBACK_CIDRS, type SandboxEcho } from "../../postman/echo.ts";

/** Response bytes kept for the attempt log (docs/webhooks.md); the rest is never read. */
const SNIPPET_BYTES = 2048;
/** Redirects followed at most (spec: Delivery rules 1; "at most 5 hops": docs/webhooks.md#delivery). */
export const MAX_REDIRECTS = 5;

/** One HTTP exchange (an attempt is one or more hops). */
export interface Hop {
  url: string;
  /** Epoch ms from the service clock. */
  startedAt: number;
  /** Wall-clock ms. */
  durationMs: number;
  statusCode: number | null;
  /** Error class without a usable response: `timeout`, `connect`, `tls`, `dns`, `address_blocked`, `redirect_*`, `protocol`. */
  error: string | null;
  snippet: string | null;
}

/** `delivered`: a 2xx; `dropped`: the address check refused a hop (never retried); `failed`: else (retried). */
export interface SendOutcome {
  kind: "delivered" | "failed" | "dropped";
  hops: Hop[];
  statusCode: number | null;
  error: string | null;
}

export interface SenderOptions {
  /** `WEBHOOK_ALLOW_PRIVATE_CIDRS`. */
  allowCidrs: readonly string[];
  /** PEM file of an extra CA for receivers (`WEBHOOK_CA_FILE`); system roots stay trusted. */
  caFile?: string;
  /** The sandbox echo receiver: its exact URL may be on loopback, with its own certificate. */
  sandboxEcho?: SandboxEcho;
  /** Per-hop budget in ms (`WEBHOOK_TIMEOUT_MS`). */
  timeoutMs: number;
  resolver: Resolver;
  clock: Clock;
  userAgent?: string;
}

export interface SendRequest {
  url: string;
  /** Exactly the signed bytes. */
  body: Uint8Array;
  /** Every header but Content-Type, Content-Length and User-Agent. */
  headers: Record<string, string>;
  /** The webhook's custom headers, sent on `url`'s origin only (as Fetch drops `Authorization` cross-origin). */
  customHeaders?: Record<string, string>;
}

const MAX_AGENTS = 256;

/** Loaded on the first delivery: ~22 MiB of RSS an idle service never needs (docs/performance.md). */
let undiciModule: Promise<typeof undici> | undefined;
let undiciLoaded: typeof undici | undefined;
const loadUndici = () => (undiciModule ??= import("undici/index.js").then((m) => (undiciLoaded = m)));

// The same few receiver URLs, parsed once; never mutated. Bounded; emptied when full.
const parsedUrls = new Map<string, URL>();
const MAX_PARSED_URLS = 1_024;
function parsedUrl(url: string): URL {
  let u = parsedUrls.get(url);
  if (!u) {
    u = new URL(url);
    if (parsedUrls.size >= MAX_PARSED_URLS) parsedUrls.clear();
    parsedUrls.set(url, u);
  }
  return u;
}

export class WebhookSender {
  private readonly agents = new Map<string, undici.Agent>();
  private readonly ca: string[] | undefined;
  private readonly echoAllow: readonly string[];
  private readonly echoResolver: Resolver;

  constructor(private readonly opts: SenderOptions) {
    this.ca = opts.caFile ? [...rootCertificates, readFileSync(opts.caFile, "utf8")] : undefined;
    this.echoAllow = [...opts.allowCidrs, ...ECHO_LOOPBACK_CIDRS];
    // `localhost` often resolves to ::1 first; the embedded default listens on 127.0.0.1.
    this.echoResolver = async (host) => [...(await opts.resolver(host))].sort((a, b) => a.family - b.family);
  }

  /** CAs for the sandbox echo, plus the service's own certificate (read late: a first start writes it later). */
  private echoCa(): string[] | undefined {
    const file = this.opts.sandboxEcho?.caFile;
    if (!file) return this.ca;
    try {
      return [...(this.ca ?? rootCertificates), readFileSync(file, "utf8")];
    } catch {
      return this.ca;
    }
  }

  /** A keep-alive agent whose every connection goes to `address` (the vetted one); `echo`: to the sandbox echo. */
  private agentFor(host: string, address: string, family: 4 | 6, { Agent }: typeof undici, echo = false): undici.Agent {
    const key = `${echo ? "echo|" : ""}${host}|${address}`;
    let agent = this.agents.get(key);
    if (agent) {
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    const ca = echo ? this.echoCa() : this.ca;
    agent = new Agent({
      connections: 64,
      keepAliveTimeout: 10_000,
      connectTimeout: this.opts.timeoutMs,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      connect: {
        ...(ca ? { ca } : {}),
        // Node's net.connect asks with `all: true` when happy-eyeballs is on; answer in both forms.
        lookup: ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          o?.all ? cb(null, [{ address, family }]) : cb(null, address, family)) as never,
      },
    });
    this.agents.set(key, agent);
    if (this.agents.size > MAX_AGENTS) {
      const [oldKey, old] = this.agents.entries().next().value as [string, undici.Agent];
      this.agents.delete(oldKey);
      old.close().catch(() => {});
    }
    return agent;
  }

  /** Sends one attempt, following redirects as docs/webhooks.md#delivery says, checking every hop; never throws. */
  async send(req: SendRequest): Promise<SendOutcome> {
    const hops: Hop[] = [];
    let url = req.url;
    let method: "POST" | "GET" = "POST";
    for (let redirects = 0; ; redirects++) {
      const hop = await this.hop(url, method, req);
      hops.push(hop.record);
      const code = hop.record.statusCode;
      if (hop.dropped) return { kind: "dropped", hops, statusCode: null, error: hop.record.error };
      if (code === null) return { kind: "failed", hops, statusCode: null, error: hop.record.error };
      if (code >= 200 && code < 300) return { kind: "delivered", hops, statusCode: code, error: null };
      if (![301, 302, 303, 307, 308].includes(code)) return { kind: "failed", hops, statusCode: code, error: null };
      if (redirects >= MAX_REDIRECTS) return this.fail(hops, code, "redirect_limit");
      let next: URL;
      try {
        next = new URL(hop.location ?? "", url);
      } catch {
        return this.fail(hops, code, "redirect_invalid");
      }
      if (!hop.location || next.protocol !== "https:" || next.username || next.password)
        return this.fail(hops, code, "redirect_invalid");
      next.hash = "";
      url = next.toString();
      if (code === 301 || code === 302 || code === 303) method = "GET";
    }
  }

  private fail(hops: Hop[], code: number, error: string): SendOutcome {
    const last = hops.at(-1);
    if (last) last.error = error;
    return { kind: "failed", hops, statusCode: code, error };
  }

  private async hop(
    url: string,
    method: "POST" | "GET",
    req: SendRequest,
  ): Promise<{ record: Hop; dropped: boolean; location?: string }> {
    const startedAt = this.opts.clock.now();
    const t0 = performance.now();
    const record = (statusCode: number | null, error: string | null, snippet: string | null = null): Hop => ({
      url,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      statusCode,
      error,
      snippet,
    });
    const u = parsedUrl(url);
    const echo = url === this.opts.sandboxEcho?.url;
    const guard = await checkHost(
      u.hostname,
      echo ? this.echoAllow : this.opts.allowCidrs,
      echo ? this.echoResolver : this.opts.resolver,
    );
    if (!guard.ok) return { record: record(null, guard.reason), dropped: true };
    const agent = this.agentFor(
      u.hostname,
      guard.address.address,
      guard.address.family,
      undiciLoaded ?? (await loadUndici()),
      echo,
    );

    const custom = req.customHeaders && u.origin === parsedUrl(req.url).origin ? req.customHeaders : undefined;
    const headers: Record<string, string> = {
      ...custom,
      "user-agent": this.opts.userAgent ?? "CourierTrackingAPI-Webhooks/1.0",
      ...req.headers,
    };
    if (method === "POST") headers["content-type"] = "application/json";
    else delete headers["x-service-signature"];
    const r = await exchange(agent, {
      url: u,
      method,
      headers,
      body: method === "POST" ? req.body : null,
      timeoutMs: this.opts.timeoutMs,
      cap: SNIPPET_BYTES,
    });
    if (r.statusCode === undefined)
      return { record: record(null, r.timedOut ? "timeout" : errorClass(r.error)), dropped: false };
    return { record: record(r.statusCode, null, r.snippet), dropped: false, location: r.location };
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.allSettled(all.map((a) => a.close()));
  }
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_CERT)/;

/** Maps a thrown error to the attempt log's error class (retryable: all of them). */
function errorClass(e: unknown, signal?: AbortSignal): string {
  if (signal?.aborted) return "timeout";
  const code = String((e as { code?: unknown })?.code ?? "");
  const causeCode = String((e as { cause?: { code?: unknown } })?.cause?.code ?? "");
  for (const c of [code, causeCode]) {
    if (!c) continue;
    if (TLS_CODES.test(c)) return "tls";
    if (
      c === "UND_ERR_CONNECT_TIMEOUT" ||
      c === "UND_ERR_HEADERS_TIMEOUT" ||
      c === "UND_ERR_BODY_TIMEOUT" ||
      c === "ETIMEDOUT"
    )
      return "timeout";
    if (
      c === "ECONNREFUSED" ||
      c === "ECONNRESET" ||
      c === "EPIPE" ||
      c === "EHOSTUNREACH" ||
      c === "ENETUNREACH" ||
      c === "UND_ERR_SOCKET"
    )
      return "connect";
  }
  const msg = String((e as Error)?.message ?? "");
  if (/certificate|tls|ssl|altname/i.test(msg)) return "tls";
  return code.startsWith("UND_ERR") ? "protocol" : "connect";
}
