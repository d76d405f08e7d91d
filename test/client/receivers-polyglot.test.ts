/**
 * The Python, Go and PHP receivers of docs/webhook-receivers.md, extracted
 * from the document and run as they are (python3, `go build`, `php -S`) as
 * real receivers of real deliveries: the service's sender reaches them over
 * HTTPS through a loopback TLS-terminating proxy (as they would be deployed),
 * which forwards the raw body and headers unchanged. Each must accept the
 * real delivery, refuse a wrong signature, a tampered body and a signature
 * header with non-ASCII bytes (401 — never an exception or a dropped
 * connection), answer a replay 2xx as a duplicate, and after a rotation
 * accept the previous secret only until WEBHOOK_PREVIOUS_UNTIL.
 *
 * The toolchains come from Debian's packages (.ci/run installs them). A
 * developer machine without one skips that language; under CI a missing
 * toolchain fails.
 *
 * NETWORK SAFETY: everything listens on 127.0.0.1; only loopback is dialled.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testContext, type TestContext } from "../helpers/app.ts";
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
const forwarded: { raw: Uint8Array; signature: string; status: number; text: string }[] = [];
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
      const res = await fetch(`http://127.0.0.1:${target}${url.pathname}`, { method: req.method, headers: req.headers, body: raw });
      const text = await res.text();
      forwarded.push({ raw, signature: req.headers.get("x-service-signature") ?? "", status: res.status, text });
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

const sign = (raw: Uint8Array | string, secret: string) => `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;

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
async function start(cmd: (port: number) => string[], env: Record<string, string>): Promise<{ port: number; stop(): Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const store = mkdtempSync(join(dir, "store-"));
    const proc = Bun.spawn(cmd(port), { env: { ...process.env, PORT: String(port), WEBHOOK_STORE_DIR: store, ...env }, stdout: "ignore", stderr: "pipe" });
    const stop = async () => {
      proc.kill();
      await proc.exited;
    };
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) break;
      if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) return { port, stop };
      await Bun.sleep(50);
    }
    await stop();
    const stderr = await new Response(proc.stderr).text();
    if (attempt < 3 && /address already in use/i.test(stderr)) continue;
    throw new Error(`receiver did not start: ${stderr}`);
  }
}

/** POSTs `raw` with a signature header straight to the receiver: `[status, body]`. */
async function post(port: number, raw: Uint8Array | string, signature: string): Promise<[number, string]> {
  const res = await fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST", headers: { "content-type": "application/json", "x-service-signature": signature }, body: typeof raw === "string" ? raw : new Blob([raw.slice()]) });
  return [res.status, await res.text()];
}

/**
 * Sends a request whose X-Service-Signature carries UTF-8 bytes (é, ✓) over a
 * raw socket, so no client library normalises the header. Returns the status
 * line, or "" when the receiver dropped the connection without answering.
 */
async function postNonAscii(port: number, raw: string): Promise<string> {
  const head = `POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(raw)}\r\nConnection: close\r\n`;
  const request = Buffer.concat([Buffer.from(head), Buffer.from("X-Service-Signature: sha256=é✓\r\n\r\n", "utf8"), Buffer.from(raw)]);
  let answer = "";
  await new Promise<void>((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (s) => void s.write(request),
        data: (_s, chunk) => void (answer += chunk.toString("latin1")),
        close: () => resolve(),
        error: (_s, e) => reject(e),
      },
    }).catch(reject);
  });
  return answer.split("\r\n")[0] ?? "";
}

async function exercise(lang: Lang): Promise<void> {
  const cmd = await prepare(lang);
  const a = await ctx.account("growth");
  const call = (path: string, body?: unknown) => ctx.call(path, { method: "POST", key: a.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const [, created] = await call("/v1/webhooks", { url: `https://127.0.0.1:${proxy.port}/hooks`, events: ["tracking.delivered"], mode: "test" });
  const first = created.data.secret as string;
  const id = created.data.id as string;

  let rx = await start(cmd, { WEBHOOK_SECRET: first });
  forwarded.length = 0;
  target = rx.port;
  const [, fired] = await call(`/v1/webhooks/${id}/test`);
  expect(fired.data).toMatchObject({ delivered: true, status_code: 200 });
  const real = forwarded.at(-1)!;
  expect(real.text).toBe("ok");
  expect(await post(rx.port, real.raw, real.signature)).toEqual([200, "duplicate"]);
  expect((await post(rx.port, real.raw, sign(real.raw, "whsec_not_the_secret")))[0]).toBe(401);
  const tampered = real.raw.slice();
  tampered[tampered.length - 2] = tampered.at(-2)! ^ 1;
  expect((await post(rx.port, tampered, real.signature))[0]).toBe(401);
  expect(await postNonAscii(rx.port, new TextDecoder().decode(real.raw))).toMatch(/^HTTP\/1\.[01] 401\b/);
  await rx.stop();

  // After a rotation the service signs with the new secret; the previous one is accepted until WEBHOOK_PREVIOUS_UNTIL.
  const [, rotated] = await call("/v1/webhooks/rotate-secret");
  const second = rotated.data.secret as string;
  const now = Math.floor(Date.now() / 1000);
  rx = await start(cmd, { WEBHOOK_SECRET: second, WEBHOOK_PREVIOUS_SECRET: first, WEBHOOK_PREVIOUS_UNTIL: String(now + 15 * 60) });
  target = rx.port;
  expect((await call(`/v1/webhooks/${id}/test`))[1].data).toMatchObject({ delivered: true, status_code: 200 });
  expect(forwarded.at(-1)!.signature).toBe(sign(forwarded.at(-1)!.raw, second));
  const payload = JSON.parse(new TextDecoder().decode(real.raw));
  const early = JSON.stringify({ ...payload, enqueued_at: "2026-11-05T13:30:01Z" });
  expect(await post(rx.port, early, sign(early, first))).toEqual([200, "ok"]);
  await rx.stop();
  rx = await start(cmd, { WEBHOOK_SECRET: second, WEBHOOK_PREVIOUS_SECRET: first, WEBHOOK_PREVIOUS_UNTIL: String(now - 1) });
  const late = JSON.stringify({ ...payload, enqueued_at: "2026-11-05T13:30:02Z" });
  expect((await post(rx.port, late, sign(late, first)))[0]).toBe(401);
  expect(await post(rx.port, late, sign(late, second))).toEqual([200, "ok"]);
  await rx.stop();
}

for (const lang of ["python", "go", "php"] as const) {
  const missing = !Bun.which(TOOL[lang]);
  test.skipIf(missing && !Bun.env.CI)(`the ${lang} receiver from the doc handles real deliveries, bad signatures, non-ASCII headers, replays and rotation`, async () => {
    expect(missing ? `${TOOL[lang]} is not installed (.ci/run installs it)` : "").toBe("");
    await exercise(lang);
  }, 90_000);
}
