/**
 * The API's P1/P2 (docs/performance.md) measured on bench:scale's database while its workers run (bench/scale.ts):
 * one `bun src/main.ts` with ROLE=api, a bare Elysia hello on the same TLS certificate (bench/bare.ts), and wrk
 * taking turns on the three for `seconds` each in slices, so a machine slowing down slows all three alike.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { selfSignedCertificate } from "../src/http/tls.ts";
import { newId } from "../src/lib/ids.ts";
import { generateApiKey, hashApiKey, keyDisplayPrefix } from "../src/modules/accounts/keys.ts";
import { freePort } from "./report.ts";
import { runWrk } from "./wrk.ts";

const ROOT = join(import.meta.dir, "..");
const ok = (url: string) =>
  fetch(url, { tls: { rejectUnauthorized: false } } as RequestInit).then(
    (r) => r.status < 500,
    () => false,
  );

/** An API process and a bare Elysia hello on `url`'s database; `stop()` ends both and removes the files. */
export async function startApi(
  url: string,
  sql: postgres.Sql,
): Promise<{ measure(seconds: number): Promise<ApiFigures>; stop(): Promise<void> }> {
  const work = mkdtempSync(join(tmpdir(), "ct-scale-"));
  const { cert, key } = await selfSignedCertificate();
  writeFileSync(join(work, "cert.pem"), cert);
  writeFileSync(join(work, "key.pem"), key);
  const keys = Array.from({ length: 200 }, () => generateApiKey());
  const accounts = keys.map(() => newId("acc")).map((id) => ({ id, email: `${id}@example.com`, plan: "business" }));
  await sql`insert into accounts ${sql(accounts)}`;
  await sql`insert into api_keys ${sql(keys.map((k, i) => ({ id: newId("key"), account_id: accounts[i]!.id, key_hash: hashApiKey(k), prefix: keyDisplayPrefix(k), name: "scale" })))}`;
  const [apiPort, barePort] = [freePort(), freePort()];
  const env = {
    ...process.env,
    DATABASE_URL: url,
    ROLE: "api",
    PORT: String(apiPort),
    HOST: "127.0.0.1",
    COURIER_MODE: "sandbox",
    DATA_DIR: join(work, "data"),
    TLS_CERT_FILE: join(work, "cert.pem"),
    TLS_KEY_FILE: join(work, "key.pem"),
    SECRETS_KEY: randomBytes(32).toString("base64url"),
  };
  const procs = [
    Bun.spawn(["bun", "src/main.ts"], { cwd: ROOT, env, stdout: "ignore", stderr: "ignore" }),
    Bun.spawn(["bun", "bench/bare.ts", "elysia", String(barePort), join(work, "cert.pem"), join(work, "key.pem")], {
      cwd: ROOT,
      stdout: "ignore",
      stderr: "ignore",
    }),
  ];
  const [api, bare] = [`https://127.0.0.1:${apiPort}`, `https://127.0.0.1:${barePort}`];
  for (let i = 0; !((await ok(`${api}/healthz`)) && (await ok(bare))); i++) {
    if (i > 600) throw new Error("bench:scale: the API or the bare hello did not start");
    await Bun.sleep(100);
  }
  // Delivered sandbox numbers (last digit 0): stored and unchanged after this warm-up, as in bench/index.ts.
  const trackPaths = Array.from(
    { length: 200 },
    (_, n) => `/v1/track?courier=delhivery&tracking_number=12345${String(n).padStart(7, "0")}0`,
  );
  for (const [n, p] of trackPaths.entries())
    await fetch(api + p, { headers: { "x-api-key": keys[n]! }, tls: { rejectUnauthorized: false } } as RequestInit);
  return {
    async measure(seconds) {
      const targets = [
        { base: bare, paths: ["/"], keys: [] as string[] },
        { base: api, paths: ["/v1/couriers"], keys },
        { base: api, paths: trackPaths, keys },
      ];
      const req = [0, 0, 0];
      const secs = [0, 0, 0];
      const slices = Math.max(1, Math.floor(seconds / 6));
      for (let s = 0; s < slices; s++) {
        for (const [i, t] of targets.entries()) {
          const r = await runWrk({ ...t, seconds: 2, connections: 64, dir: work });
          req[i]! += r.requests;
          secs[i]! += r.requests / Math.max(r.rps, 1e-9);
        }
      }
      const [hello, couriers, track] = req.map((n, i) => n / Math.max(secs[i]!, 1e-9)) as [number, number, number];
      return { hello, couriers, track, p1: couriers / hello, p2: track / couriers };
    },
    async stop() {
      for (const p of procs) p.kill("SIGTERM");
      await Promise.all(procs.map((p) => p.exited));
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Requests per second of each target, and P1 = couriers ÷ hello, P2 = track ÷ couriers. */
export interface ApiFigures {
  hello: number;
  couriers: number;
  track: number;
  p1: number;
  p2: number;
}
