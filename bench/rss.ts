/**
 * `bun run bench:rss` — idle RSS of the service started as `bun run bench` starts it (`bun src/main.ts`, DATABASE_URL on
 * a template copy, sandbox couriers, TLS, the rest default), `--starts` times: VmRSS when `/healthz` first answers
 * (P5's "idle") and VmRSS / RssAnon / RssFile `--settle-ms` later, then min and median (MiB). `NAME=value` arguments
 * go into the service's environment: `bun run bench:rss --starts 5 ROLE=api`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { selfSignedCertificate } from "../src/http/tls.ts";
import { createTestDatabase } from "../test/helpers/db.ts";
import { freePort, median } from "./report.ts";

const { values: args, positionals } = parseArgs({
  options: { starts: { type: "string", default: "3" }, "settle-ms": { type: "string", default: "2000" } },
  allowPositionals: true,
});
const ROOT = join(import.meta.dir, "..");
/** Variables of the caller's shell that would change the service's configuration: unset, as the bench does. */
const UNSET = /^(LOG_LEVEL|ROLE|ADMIN_PORT|TRUST_PROXY|SMTP_URL|OTEL_|COURIER_|TERMINAL_REUSE_SECONDS)/;

/** VmRSS, RssAnon and RssFile of process `pid`, MiB. */
function memory(pid: number): { rss: number; anon: number; file: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) / 1024;
  return { rss: kib("VmRSS"), anon: kib("RssAnon"), file: kib("RssFile") };
}

/** One start on a fresh database: RSS at the first answer of `/healthz` and `settleMs` later. */
async function oneStart(work: string, certFile: string, keyFile: string, extra: Record<string, string>) {
  const tdb = await createTestDatabase({ max: 1 });
  const port = freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !UNSET.test(k)) env[k] = v;
  Object.assign(env, {
    DATABASE_URL: tdb.url,
    DATA_DIR: mkdtempSync(join(work, "data-")),
    PORT: String(port),
    HOST: "127.0.0.1",
    TLS_CERT_FILE: certFile,
    TLS_KEY_FILE: keyFile,
    COURIER_MODE: "sandbox",
    SECRETS_KEY: randomBytes(32).toString("base64url"),
    ...extra,
  });
  const proc = Bun.spawn(["bun", "src/main.ts"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`the service did not start (${proc.exitCode})`);
      const ok = await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { rejectUnauthorized: false } } as RequestInit)
        .then((r) => r.status < 500)
        .catch(() => false);
      if (ok) break;
      await Bun.sleep(100);
    }
    const atReady = memory(proc.pid).rss;
    await Bun.sleep(Number(args["settle-ms"]));
    return { atReady, ...memory(proc.pid) };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    await tdb.drop();
  }
}

const work = mkdtempSync(join(tmpdir(), "ct-rss-"));
try {
  const { cert, key } = await selfSignedCertificate();
  const certFile = join(work, "cert.pem");
  const keyFile = join(work, "key.pem");
  writeFileSync(certFile, cert);
  writeFileSync(keyFile, key);
  const extra = Object.fromEntries(positionals.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
  const rows: Awaited<ReturnType<typeof oneStart>>[] = [];
  for (let i = 0; i < Number(args.starts); i++) {
    const r = await oneStart(work, certFile, keyFile, extra);
    rows.push(r);
    const f = (x: number) => x.toFixed(1);
    console.log(`start ${i + 1}: at ready ${f(r.atReady)}; settled ${f(r.rss)} (anon ${f(r.anon)}, file ${f(r.file)})`);
  }
  for (const k of ["atReady", "rss", "anon", "file"] as const) {
    const v = rows.map((r) => r[k]);
    console.log(`${k.padEnd(8)} min ${Math.min(...v).toFixed(1)}  median ${median(v).toFixed(1)} MiB`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
