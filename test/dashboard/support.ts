/**
 * Helpers for the dashboard tests: a cookie-keeping client over the real app
 * (`app.handle`), a self-signed certificate, and an HTTPS webhook receiver
 * on 127.0.0.1 (NETWORK SAFETY: loopback only).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import selfsigned from "selfsigned";

type Fields = Record<string, string | string[]>;

/** A browser-like client: keeps cookies (by name), follows nothing, returns `[response, html]`. */
export class Client {
  readonly jar = new Map<string, string>();
  /** Extra headers on every request (e.g. X-Forwarded-For with TRUST_PROXY). */
  headers: Record<string, string> = {};
  constructor(private readonly app: { handle(r: Request): Promise<Response> }) {}

  private store(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (/max-age=0/i.test(c) || value === "") this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  /** The `cookie` header of the jar, for requests the helpers do not cover (raw bodies, binary responses). */
  cookieHeader(): Record<string, string> {
    return this.jar.size ? { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<[Response, string]> {
    const res = await this.app.handle(
      new Request(`http://localhost${path}`, { headers: { ...this.headers, ...this.cookieHeader(), ...headers } }),
    );
    this.store(res);
    return [res, await res.text()];
  }

  /** POSTs a urlencoded form. `csrf` defaults to the token of the last page fetched with {@link csrfOf}. */
  async post(path: string, fields: Fields, headers: Record<string, string> = {}): Promise<[Response, string]> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    const res = await this.app.handle(
      new Request(`http://localhost${path}`, {
        method: "POST",
        headers: {
          ...this.headers,
          ...this.cookieHeader(),
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        },
        body: body.toString(),
      }),
    );
    this.store(res);
    return [res, await res.text()];
  }

  /** POSTs a multipart form (a file upload): each `File` value goes as a file part. */
  async postMultipart(path: string, fields: Record<string, string | File>): Promise<[Response, string]> {
    const body = new FormData();
    for (const [k, v] of Object.entries(fields)) body.append(k, v);
    const res = await this.app.handle(
      new Request(`http://localhost${path}`, {
        method: "POST",
        headers: { ...this.headers, ...this.cookieHeader() },
        body,
      }),
    );
    this.store(res);
    return [res, await res.text()];
  }

  /** GETs `page` and returns its CSRF token. */
  async csrf(page = "/dashboard"): Promise<string> {
    const [, html] = await this.get(page);
    return csrfOf(html);
  }

  /** Signs up through the forms; returns the first API key shown on the welcome page. */
  async signUp(email: string, password = "correct horse battery"): Promise<string> {
    const csrf = csrfOf((await this.get("/dashboard/sign-up"))[1]);
    const [res, html] = await this.post("/dashboard/sign-up", { _csrf: csrf, email, password });
    if (res.status !== 201) throw new Error(`sign-up failed: ${res.status}`);
    return keyOf(html);
  }

  async signIn(email: string, password = "correct horse battery"): Promise<Response> {
    const csrf = csrfOf((await this.get("/dashboard/sign-in"))[1]);
    return (await this.post("/dashboard/sign-in", { _csrf: csrf, email, password }))[0];
  }
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF field on the page");
  return m[1]!;
}

export function keyOf(html: string): string {
  const m = /value="(ctk_[A-Za-z0-9_-]{43})"/.exec(html);
  if (!m) throw new Error("no API key on the page");
  return m[1]!;
}

/** Inline `<script>` elements (the CSP forbids them; every script has a `src`). */
export const inlineScripts = (html: string) => [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>/gi)].length;

export interface Cert {
  cert: string;
  key: string;
  caFile: string;
}

let certP: Promise<Cert> | undefined;

/** A self-signed certificate for 127.0.0.1 / localhost, written to a temp CA file. */
export function testCert(): Promise<Cert> {
  certP ??= (async () => {
    const pems = await selfsigned.generate([{ name: "commonName", value: "localhost" }], {
      keyType: "ec",
      curve: "P-256",
      algorithm: "sha256",
      notBeforeDate: new Date(Date.now() - 86_400_000),
      notAfterDate: new Date(Date.now() + 30 * 86_400_000),
      extensions: [
        { name: "basicConstraints", cA: false },
        {
          name: "subjectAltName",
          altNames: [
            { type: 2, value: "localhost" },
            { type: 7, ip: "127.0.0.1" },
          ],
        },
      ],
    } as never);
    const dir = mkdtempSync(join(tmpdir(), "dash-ca-"));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, pems.cert);
    return { cert: pems.cert, key: pems.private, caFile };
  })();
  return certP;
}

/** Environment that lets test fires reach a loopback receiver with the test certificate. */
export async function webhookEnv(): Promise<Record<string, string>> {
  return {
    WEBHOOK_CA_FILE: (await testCert()).caFile,
    WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8",
    WEBHOOK_TIMEOUT_MS: "3000",
  };
}

/** An HTTPS receiver on 127.0.0.1 answering `respond()` (default 200 "ok"). */
export async function startReceiver(respond: () => Response = () => new Response("ok")) {
  const { cert, key } = await testCert();
  const hits: { path: string; headers: Record<string, string>; body: string }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      hits.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text() });
      return respond();
    },
  });
  return { url: (p = "/hook") => `https://127.0.0.1:${server.port}${p}`, hits, stop: () => server.stop(true) };
}
