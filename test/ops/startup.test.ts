/**
 * Start-up as an operator sees it, with real processes: every bad variable
 * reported at once; an unreachable database retried with one JSON line per
 * try, then one clear line and a non-zero exit; a replica with another
 * SECRETS_KEY refused with one line; a ROLE=worker process answering
 * /healthz, /readyz and /metrics on its internal port.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { freePort, servicesOnTestDatabase } from "./process.ts";
import pkg from "../../package.json" with { type: "json" };

const services = servicesOnTestDatabase();
const spawn = services.spawn;
const key = () => randomBytes(32).toString("base64url");

test("a bad configuration names every bad variable in one line, and exits 1", async () => {
  const p = spawn({ PORT: "eighty", ROLE: "boss", LOG_LEVEL: "loud", TLS_CERT_FILE: "/x" });
  expect(await p.exited).toBe(1);
  const lines = p.lines();
  expect(lines).toHaveLength(1);
  expect(lines[0]!.level).toBe("error");
  for (const v of ["PORT", "ROLE", "LOG_LEVEL", "TLS_KEY_FILE"]) expect(lines[0]!.msg).toContain(v);
  expect(lines[0]!.problems.map((x: any) => x.variable).sort()).toEqual(["LOG_LEVEL", "PORT", "ROLE", "TLS_KEY_FILE"]);
  expect(p.stderr()).toBe("");
});

test("an unreachable database: one JSON line per try with backoff, then one clear line and exit 1 (no stack trace)", async () => {
  const port = freePort(); // nothing listens there
  const p = spawn({
    DATABASE_URL: `postgres://app:s3cret-pw@127.0.0.1:${port}/app`,
    SECRETS_KEY: key(),
    DB_CONNECT_TIMEOUT_SECONDS: "3",
    PORT: String(freePort()),
  });
  expect(await p.exited).toBe(1);
  const lines = p.lines();
  const tries = lines.filter((l) => l.msg === "database not reachable; retrying");
  expect(tries.length).toBeGreaterThanOrEqual(2);
  expect(tries.map((l) => l.attempt)).toEqual(tries.map((_, i) => i + 1));
  expect(tries[1]!.retry_in_ms).toBeGreaterThan(tries[0]!.retry_in_ms);
  expect(tries[0]!.code).toBe("ECONNREFUSED");
  const last = lines.at(-1)!;
  expect(last.level).toBe("error");
  expect(last.msg).toContain(`database 127.0.0.1:${port}/app not reachable after`);
  expect(p.stdout()).not.toContain("s3cret-pw");
  expect(p.stderr()).toBe("");
  expect(
    p
      .stdout()
      .split("\n")
      .filter((l) => l && !l.startsWith("{")),
  ).toEqual([]);
});

test("with DATABASE_URL and no SECRETS_KEY the start is refused unless SECRETS_KEY_GENERATE=single-node", async () => {
  const p = spawn({ DATABASE_URL: services.db().url, PORT: String(freePort()) });
  expect(await p.exited).toBe(1);
  expect(p.lines().at(-1)!.msg).toContain("SECRETS_KEY is required with DATABASE_URL");
});

test("a worker answers on its internal port; a replica with another SECRETS_KEY refuses to start with one line", async () => {
  const adminPort = freePort();
  const worker = spawn({
    DATABASE_URL: services.db().url,
    SECRETS_KEY: key(),
    ROLE: "worker",
    ADMIN_PORT: String(adminPort),
  });
  await worker.waitForLine((l) => l.msg === "worker started", 30_000);
  expect(worker.lines().find((l) => l.msg === "couriers")).toMatchObject({ mode: "live", sandbox: [] }); // DATABASE_URL: live unless said otherwise
  expect(worker.stdout()).not.toContain("development account");
  const base = `http://127.0.0.1:${adminPort}`;
  expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok", version: pkg.version });
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  const metrics = await fetch(`${base}/metrics`);
  expect(metrics.status).toBe(200);
  const text = await metrics.text();
  expect(text).toContain("process_resident_memory_bytes");
  expect(text).toContain("courier_tracking_outbox_due");
  expect((await fetch(`${base}/v1/couriers`)).status).toBe(404);

  const other = spawn({ DATABASE_URL: services.db().url, SECRETS_KEY: key(), ROLE: "api", PORT: String(freePort()) });
  expect(await other.exited).toBe(1);
  const last = other.lines().at(-1)!;
  expect(last.level).toBe("error");
  expect(last.msg).toContain("SECRETS_KEY does not match");
  expect(other.lines().filter((l) => l.level === "error")).toHaveLength(1);
  expect(other.stderr()).toBe("");

  worker.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
  expect(worker.lines().at(-1)!.msg).toBe("stopped");
}, 90_000);
