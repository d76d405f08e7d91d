/**
 * The service as a real child process for the operations tests: the exact
 * environment given (plus PATH/HOME), stdout and stderr collected, JSON log
 * lines parsed. NETWORK SAFETY: processes listen on 127.0.0.1 only.
 */
import { afterAll, beforeAll } from "bun:test";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

export { freePort } from "../client/service.ts";

const ROOT = join(import.meta.dir, "..", "..");

export interface Proc {
  pid: number;
  exited: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON lines of stdout (non-JSON lines are skipped). */
  lines(): Record<string, any>[];
  /** Resolves with the first JSON line matching, or rejects after `ms`. */
  waitForLine(pred: (l: Record<string, any>) => boolean, ms?: number): Promise<Record<string, any>>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `bun run <bunArgs…> <entry>` (default src/main.ts) with `env`. */
export function spawnService(env: Record<string, string>, entry = "src/main.ts", bunArgs: string[] = []): Proc {
  const proc = Bun.spawn(["bun", "run", ...bunArgs, entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "info", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const read = Promise.all([
    (async () => {
      for await (const c of proc.stdout) out += new TextDecoder().decode(c);
    })(),
    (async () => {
      for await (const c of proc.stderr) err += new TextDecoder().decode(c);
    })(),
  ]);
  // Exit code once the output the process wrote is read too (bounded: a child it left running may hold the pipes).
  const exited = proc.exited.then(async (code) => (await Promise.race([read, Bun.sleep(2_000)]), code));
  const lines = () =>
    out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, any>];
        } catch {
          return [];
        }
      });
  return {
    pid: proc.pid,
    exited,
    stdout: () => out,
    stderr: () => err,
    lines,
    async waitForLine(pred, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const hit = lines().find(pred);
        if (hit) return hit;
        if (proc.exitCode !== null) break;
        await Bun.sleep(50);
      }
      throw new Error(`no matching log line (exit ${proc.exitCode})\nstdout:\n${out}\nstderr:\n${err}`);
    },
    kill: (signal = "SIGTERM") => proc.kill(signal),
  };
}

/** `fetch` accepting the service's self-signed certificate. */
export const insecureFetch = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, tls: { rejectUnauthorized: false } } as RequestInit);

/**
 * Service processes on one test database for a whole test file: registers the file's beforeAll/afterAll (create the
 * database; kill every spawned process, then drop it). `db()` is the database once beforeAll ran.
 */
export function servicesOnTestDatabase(): { db: () => TestDatabase; spawn: (env: Record<string, string>) => Proc } {
  let tdb: TestDatabase | undefined;
  const procs: Proc[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase({ max: 1 });
  });
  afterAll(async () => {
    for (const p of procs) p.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await tdb?.drop();
  });
  return {
    db: () => tdb!,
    spawn: (env) => {
      const p = spawnService(env);
      procs.push(p);
      return p;
    },
  };
}
