/**
 * The real service as a child process (`bun run src/main.ts`), the way a
 * newcomer starts it: fresh database (a per-test copy of the migrated
 * template), temp DATA_DIR (self-signed certificate generated there),
 * sandbox couriers, a free loopback port. Waits for `/healthz`, reads the
 * development key printed once on stdout, stops with SIGTERM.
 *
 * NETWORK SAFETY: the service listens on 127.0.0.1; tests only call it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

const ROOT = join(import.meta.dir, "..", "..");

export interface RunningService {
  port: number;
  /** `https://localhost:<port>` (also PUBLIC_BASE_URL). */
  baseUrl: string;
  /** The development API key the first start printed. */
  key: string;
  dataDir: string;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  /** `fetch` against the service, accepting its self-signed certificate. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM, wait for exit, drop the database (unless it was passed in), remove DATA_DIR. Returns the exit code. */
  stop(): Promise<number>;
  /** The service's process id (for kill -9 tests). */
  pid: number;
}

/** A free TCP port on loopback (bound then released). */
export function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Starts the service with `env` added to the defaults above; rejects if it is not healthy within `timeoutMs`. */
export interface StartOptions {
  /** Run on this database (a restart of the same deployment); it is then not dropped at stop. */
  tdb?: TestDatabase;
  /** Wait for the development key to be printed (only a first start on a database prints it). */
  expectKey?: boolean;
  /** Run the code of this folder instead of this checkout's (another release's, test/upgrade/). */
  cwd?: string;
}

export async function startService(
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  opts: StartOptions = {},
): Promise<RunningService> {
  const own = !opts.tdb;
  const tdb: TestDatabase = opts.tdb ?? (await createTestDatabase({ max: 1 }));
  const expectKey = opts.expectKey ?? own;
  const dataDir = mkdtempSync(join(tmpdir(), "ct-svc-"));
  const port = freePort();
  const baseUrl = `https://localhost:${port}`;
  const proc = Bun.spawn(["bun", "run", "src/main.ts"], {
    cwd: opts.cwd ?? ROOT,
    env: {
      ...process.env,
      DATABASE_URL: tdb.url,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      COURIER_MODE: "sandbox",
      SANDBOX_ASYNC_SECONDS: "1",
      LOG_LEVEL: "info",
      SECRETS_KEY_GENERATE: "single-node",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  void (async () => {
    for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
  })();
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, { ...init, tls: { rejectUnauthorized: false } } as RequestInit);
  const stop = async () => {
    proc.kill("SIGTERM");
    const code = await proc.exited;
    if (own) await tdb.drop();
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  const deadline = Date.now() + timeoutMs;
  let key: string | undefined;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    key ??= /API key \(shown once\): (ctk_[A-Za-z0-9_-]+)/.exec(out)?.[1];
    const healthy = await call("/healthz").then(
      (r) => r.ok,
      () => false,
    );
    if (healthy && (key || !expectKey))
      return { port, baseUrl, key: key ?? "", dataDir, stdout: () => out, fetch: call, stop, pid: proc.pid };
    await Bun.sleep(100);
  }
  await stop().catch(() => {});
  throw new Error(`service did not become healthy (exit ${proc.exitCode})\nstdout:\n${out}\nstderr:\n${err}`);
}
