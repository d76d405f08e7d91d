/**
 * The Python, Go and PHP receivers of docs/webhook-receivers.md, extracted
 * from the document and run as they are (python3, `go build`, `php -S`) as
 * real receivers of real deliveries: the service's sender reaches them over
 * HTTPS through a loopback TLS-terminating proxy (as they would be deployed),
 * which forwards the raw body and headers unchanged. Each must pass the
 * receiver audit (`POST /v1/webhooks/{id}/audit`, verdict ok), accept the real
 * delivery, refuse a wrong signature, a tampered body, missing Standard
 * Webhooks headers, a timestamp 6 minutes off and signature headers with
 * non-ASCII bytes (401 — never an exception or a dropped connection), answer
 * a replay 2xx as a duplicate, and after a rotation accept the previous secret
 * only until WEBHOOK_PREVIOUS_UNTIL.
 *
 * The toolchains come from Debian's packages (.ci/run installs them). A
 * developer machine without one skips that language; under CI a missing
 * toolchain fails.
 *
 * NETWORK SAFETY: everything listens on 127.0.0.1; only loopback is dialled.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testContext, type TestContext } from "../helpers/app.ts";
import { rawRequest } from "../helpers/raw-http.ts";
import { testCert, webhookEnv } from "../webhooks/receiver.ts";
import { freePort } from "./service.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/webhook-receivers.md"), "utf8");
const block = (lang: string) => {
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)\\n```").exec(DOC);
  if (!m) throw new Error(`no ${lang} block in docs/webhook-receivers.md`);
  return m[1]!;
};

type Lang = "python" | "go" | "php";
const TOOL: Record<Lang, string> = { python: "python3", go: "go", php: "php" };
const FILE: Record<Lang, string> = { python: "receiver.py", go: "receiver.go", php: "receiver.php" };

let ctx: TestContext;
let proxy: ReturnType<typeof Bun.serve>;
/** The port the proxy forwards to (the receiver under test). */
let target = 0;
const forwarded: { raw: Uint8Array; headers: Record<string, string>; status: number; text: string }[] = [];
const dir = mkdtempSync(join(tmpdir(), "receivers-polyglot-"));

beforeAll(async () => {
  const { cert, key } = await testCert();
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      const raw = new Uint8Array(await req.arrayBuffer());
      const url = new URL(req.url);
      const res = await fetch(`http://127.0.0.1:${target}${url.pathname}`, {
        method: req.method,
        headers: req.headers,
        body: raw,
      });
      const text = await res.text();
      const signing = [...req.headers].filter(([k]) => k.startsWith("x-") || k.startsWith("webhook-"));
      forwarded.push({ raw, headers: Object.fromEntries(signing), status: res.status, text });
      return new Response(text, { status: res.status });
    },
  });
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  proxy?.stop(true);
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes the language's block to a file (Go: builds it) and returns the command that serves it on `port`. */
async function prepare(lang: Lang): Promise<(port: number) => string[]> {
  const file = join(dir, FILE[lang]);
  writeFileSync(file, block(lang));
  if (lang === "python") return () => ["python3", file];
  if (lang === "php") return (port) => ["php", "-S", `127.0.0.1:${port}`, file];
  const bin = join(dir, "receiver-go");
  const build = Bun.spawn(["go", "build", "-o", bin, file], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [code, err] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`go build failed:\n${err}`);
  return () => [bin];
}

/**
 * Starts a receiver with its secrets in the environment; resolves once it answers HTTP. A free port can be
 * taken by another test file's process between `freePort()` and the receiver's bind (six files run at
 * once): then it is started again on another port, up to three times.
 */
async function start(
  cmd: (port: number) => string[],
  env: Record<string, string>,
): Promise<{ port: number; stop(): Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const store = mkdtempSync(join(dir, "store-"));
    const proc = Bun.spawn(cmd(port), {
      env: { ...process.env, PORT: String(port), WEBHOOK_STORE_DIR: store, ...env },
      stdout: "ignore",
      stderr: "pipe",
    });
    const stop = async () => {
      proc.kill();
      await proc.exited;
    };
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) break;
      if (
        await fetch(`http://127.0.0.1:${port}/`).then(
          () => true,
          () => false,
        )
      )
        return { port, stop };
      await Bun.sleep(50);
    }
    await stop();
    const stderr = await new Response(proc.stderr).text();
    if (attempt < 3 && /address already in use/i.test(stderr)) continue;
    throw new Error(`receiver did not start: ${stderr}`);
  }
}

/**
 * Both signature schemes of a delivery of `raw` under `secret` (docs/webhook-receivers.md, rules 1 and 2), with
 * `webhook-timestamp` `offsetS` seconds from now.
 */
type Signed = Record<"x-service-signature" | "webhook-id" | "webhook-timestamp" | "webhook-signature", string>;
function signed(raw: Uint8Array | string, secret: string, offsetS = 0): Signed {
  const id = `evt_polyglot_${crypto.randomUUID()}`;
  const ts = String(Math.floor(Date.now() / 1000) + offsetS);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return {
    "x-service-signature": `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`,
    "webhook-id": id,
    "webhook-timestamp": ts,
    "webhook-signature": `v1,${createHmac("sha256", key).update(`${id}.${ts}.`).update(raw).digest("base64")}`,
  };
}

/** POSTs `raw` with `headers` straight to the receiver: `[status, body]`. */
async function post(
  port: number,
  raw: Uint8Array | string,
  headers: Record<string, string>,
): Promise<[number, string]> {
  const res = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: typeof raw === "string" ? raw : new Blob([raw.slice()]),
  });
  return [res.status, await res.text()];
}

/**
 * Sends `raw` with `headers`, the header `name` replaced by UTF-8 bytes (é, ✓), over a raw socket so no client
 * library normalises it. Returns the status, 0 when the receiver dropped the connection without answering.
 */
async function postNonAscii(
  port: number,
  raw: string,
  headers: Record<string, string>,
  name: string,
  value: string,
): Promise<number> {
  const lines = Object.entries({ ...headers, [name]: value }).map(([k, v]) => `${k}: ${v}\r\n`);
  const head = `POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(raw)}\r\nConnection: close\r\n${lines.join("")}\r\n`;
  return (await rawRequest(port, Buffer.concat([Buffer.from(head, "utf8"), Buffer.from(raw)]))).status;
}

type Call = (path: string, body?: unknown) => Promise<[Response, any]>;

/** With the first secret: the real test delivery, the audit and what a receiver must refuse. */
async function firstSecret(rx: { port: number }, call: Call, id: string, secret: string): Promise<Uint8Array> {
  const [, fired] = await call(`/v1/webhooks/${id}/test`);
  expect(fired.data).toMatchObject({ delivered: true, status_code: 200 });
  const real = forwarded.at(-1)!;
  expect(real.text).toBe("ok");
  expect(await post(rx.port, real.raw, real.headers)).toEqual([200, "duplicate"]);
  expect((await post(rx.port, real.raw, signed(real.raw, `whsec_${randomBytes(32).toString("base64")}`)))[0]).toBe(401);
  const tampered = real.raw.slice();
  tampered[tampered.length - 2] = tampered.at(-2)! ^ 1;
  expect((await post(rx.port, tampered, real.headers))[0]).toBe(401);
  // After the test fire: the audit's valid case may then be a duplicate of it (same sample data, same second).
  const [, audited] = await call(`/v1/webhooks/${id}/audit`);
  expect([audited.data.verdict, audited.data.cases.map((c: any) => [c.case, c.status])]).toEqual([
    "ok",
    [
      ["valid", 200],
      ["wrong_signature", 401],
      ["stale_timestamp", 401],
      ["no_signature", 401],
    ],
  ]);

  const payload = JSON.parse(new TextDecoder().decode(real.raw));
  const fresh = (n: number) => JSON.stringify({ ...payload, enqueued_at: `2026-11-05T13:31:0${n}Z` });
  const { "x-service-signature": bodyOnly } = signed(fresh(1), secret);
  expect((await post(rx.port, fresh(1), { "x-service-signature": bodyOnly }))[0]).toBe(401);
  expect((await post(rx.port, fresh(1), signed(fresh(1), secret, -6 * 60)))[0]).toBe(401);
  expect((await post(rx.port, fresh(1), signed(fresh(1), secret, 6 * 60)))[0]).toBe(401);
  expect(await post(rx.port, fresh(1), signed(fresh(1), secret, -4 * 60))).toEqual([200, "ok"]);
  for (const name of ["x-service-signature", "webhook-signature"])
    expect(await postNonAscii(rx.port, fresh(2), signed(fresh(2), secret), name, "sha256=é✓ v1,é✓")).toBe(401);
  return real.raw;
}

async function exercise(lang: Lang): Promise<void> {
  const cmd = await prepare(lang);
  const a = await ctx.account("growth");
  const call: Call = (path, body) =>
    ctx.call(path, { method: "POST", key: a.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const [, created] = await call("/v1/webhooks", {
    url: `https://127.0.0.1:${proxy.port}/hooks`,
    events: ["tracking.delivered"],
    mode: "test",
  });
  const first = created.data.secret as string;
  const id = created.data.id as string;

  let rx = await start(cmd, { WEBHOOK_SECRET: first });
  forwarded.length = 0;
  target = rx.port;
  const raw = await firstSecret(rx, call, id, first);
  await rx.stop();

  // After a rotation the service signs with the new secret; the previous one is accepted until WEBHOOK_PREVIOUS_UNTIL.
  const [, rotated] = await call("/v1/webhooks/rotate-secret");
  const second = rotated.data.secret as string;
  const now = Math.floor(Date.now() / 1000);
  rx = await start(cmd, {
    WEBHOOK_SECRET: second,
    WEBHOOK_PREVIOUS_SECRET: first,
    WEBHOOK_PREVIOUS_UNTIL: String(now + 15 * 60),
  });
  target = rx.port;
  expect((await call(`/v1/webhooks/${id}/test`))[1].data).toMatchObject({ delivered: true, status_code: 200 });
  const last = forwarded.at(-1)!;
  expect(last.headers["x-service-signature"]).toBe(signed(last.raw, second)["x-service-signature"]);
  const payload = JSON.parse(new TextDecoder().decode(raw));
  const early = JSON.stringify({ ...payload, enqueued_at: "2026-11-05T13:30:01Z" });
  expect(await post(rx.port, early, signed(early, first))).toEqual([200, "ok"]);
  await rx.stop();
  rx = await start(cmd, {
    WEBHOOK_SECRET: second,
    WEBHOOK_PREVIOUS_SECRET: first,
    WEBHOOK_PREVIOUS_UNTIL: String(now - 1),
  });
  const late = JSON.stringify({ ...payload, enqueued_at: "2026-11-05T13:30:02Z" });
  expect((await post(rx.port, late, signed(late, first)))[0]).toBe(401);
  expect(await post(rx.port, late, signed(late, second))).toEqual([200, "ok"]);
  await rx.stop();
}

for (const lang of ["python", "go", "php"] as const) {
  const missing = !Bun.which(TOOL[lang]);
  test.skipIf(missing && !Bun.env.CI)(
    `the ${lang} receiver from the doc passes the audit and handles real deliveries, bad signatures and timestamps, non-ASCII headers, replays and rotation`,
    async () => {
      expect(missing ? `${TOOL[lang]} is not installed (.ci/run installs it)` : "").toBe("");
      await exercise(lang);
    },
    90_000,
  );
}
