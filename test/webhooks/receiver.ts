/**
 * Real HTTPS webhook receivers on loopback for the webhook tests, with a
 * self-signed certificate (SAN: localhost, receiver.test, 127.0.0.1, ::1)
 * that the service is told to trust through WEBHOOK_CA_FILE.
 *
 * NETWORK SAFETY: receivers listen on 127.0.0.1 only, and tests send only to
 * them. Hostile addresses are tested as data (classifier), never dialled.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import selfsigned from "selfsigned";

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  raw: Uint8Array;
  text: string;
  json: any;
  at: number;
}

export type Handler = (req: Request, url: URL, n: number) => Response | Promise<Response>;

export interface Receiver {
  port: number;
  /** `https://127.0.0.1:<port><path>` */
  url(path?: string): string;
  received: Received[];
  /** Requests to one path. */
  on(path: string): Received[];
  /** Route a path to a handler (default: 200 "ok"). */
  route(path: string, h: Handler): void;
  /** Resolves when `n` requests in total have arrived at `path` (or rejects after `ms`). */
  waitFor(path: string, n: number, ms?: number): Promise<Received[]>;
  stop(): void;
}

export interface Cert {
  cert: string;
  key: string;
  caFile: string;
}

let certPromise: Promise<Cert> | undefined;

/** One self-signed certificate per test process, written to a temp file. */
export function testCert(): Promise<Cert> {
  certPromise ??= (async () => {
    const pems = await selfsigned.generate([{ name: "commonName", value: "receiver.test" }], {
      keyType: "ec",
      curve: "P-256",
      notBeforeDate: new Date(Date.now() - 86_400_000),
      notAfterDate: new Date(Date.now() + 30 * 86_400_000),
      extensions: [
        { name: "basicConstraints", cA: false },
        {
          name: "subjectAltName",
          altNames: [
            { type: 2, value: "localhost" },
            { type: 2, value: "receiver.test" },
            { type: 7, ip: "127.0.0.1" },
            { type: 7, ip: "::1" },
          ],
        },
      ],
    } as never);
    const dir = mkdtempSync(join(tmpdir(), "wh-ca-"));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, pems.cert);
    return { cert: pems.cert, key: pems.private, caFile };
  })();
  return certPromise;
}

/** Environment for testContext(): trust the test CA, allow loopback, short retry schedule. */
export async function webhookEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const { caFile } = await testCert();
  return {
    WEBHOOK_CA_FILE: caFile,
    WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8,::1/128",
    WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1",
    WEBHOOK_TIMEOUT_MS: "3000",
    ...extra,
  };
}

export async function startReceiver(): Promise<Receiver> {
  const { cert, key } = await testCert();
  const received: Received[] = [];
  const routes = new Map<string, Handler>();
  const waiters: { path: string; n: number; resolve: (r: Received[]) => void }[] = [];
  const on = (path: string) => received.filter((r) => r.path === path);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      const url = new URL(req.url);
      const raw = new Uint8Array(await req.arrayBuffer());
      const text = new TextDecoder().decode(raw);
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {}
      received.push({
        method: req.method,
        path: url.pathname,
        headers: Object.fromEntries(req.headers),
        raw,
        text,
        json,
        at: Date.now(),
      });
      for (const w of [...waiters]) {
        const got = on(w.path);
        if (got.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(got);
        }
      }
      const h = routes.get(url.pathname);
      return h ? h(req, url, on(url.pathname).length) : new Response("ok");
    },
  });
  const port = server.port!;
  return {
    port,
    url: (path = "/hook") => `https://127.0.0.1:${port}${path}`,
    received,
    on,
    route: (path, h) => void routes.set(path, h),
    waitFor(path, n, ms = 10_000) {
      const got = on(path);
      if (got.length >= n) return Promise.resolve(got);
      return new Promise((resolve, reject) => {
        const w = { path, n, resolve };
        waiters.push(w);
        setTimeout(
          () => reject(new Error(`receiver: ${on(path).length}/${n} requests at ${path} after ${ms} ms`)),
          ms,
        ).unref?.();
      });
    },
    stop: () => void server.stop(true),
  };
}
