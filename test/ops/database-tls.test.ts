/**
 * Database TLS against a real PostgreSQL with `ssl=on` and a certificate made here (test/helpers/tls-postgres.ts),
 * each libpq mode as DATABASE_URL says it: verify-full with the right CA connects over TLS; a wrong CA, a certificate
 * for another host (verify-full) and a server without TLS (require) each end the start at once with one line that
 * names DATABASE_URL and the TLS problem, and never the URL's password. The server is restarted without TLS for the
 * last test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { connect, DatabaseUnreachableError, waitForDatabase } from "../../src/db/client.ts";
import { databaseTls, DatabaseTlsError } from "../../src/db/tls.ts";
import { startTlsPostgres, type TlsPostgres } from "../helpers/tls-postgres.ts";
import { freePort, spawnService, type Proc } from "./process.ts";

const PASSWORD = "s3cret-pw-never-logged";
let pg: TlsPostgres;
const procs: Proc[] = [];
const warnings: unknown[] = [];
const log = { info: () => {}, warn: (...a: unknown[]) => warnings.push(a), error: () => {}, debug: () => {} } as never;

beforeAll(async () => {
  pg = await startTlsPostgres();
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  pg?.stop();
});

const url = (host: string, query: string) => `postgres://postgres:${PASSWORD}@${host}:${pg.port}/postgres?${query}`;

/** Connects as the service does (wait, then a pool) and reports whether the session is encrypted. */
async function sessionUsesTls(databaseUrl: string): Promise<boolean> {
  await waitForDatabase(databaseUrl, { timeoutSeconds: 5, log });
  const { sql } = connect(databaseUrl, { max: 1, deadlines: true });
  try {
    const [row] = await sql<{ ssl: boolean }[]>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`;
    return row!.ssl;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** The one line start-up gives up with (waitForDatabase's error), and the retries it logged first (each one warns). */
async function refusal(databaseUrl: string): Promise<{ message: string; retries: unknown[] }> {
  const before = warnings.length;
  const err = await waitForDatabase(databaseUrl, { timeoutSeconds: 30, log }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatabaseUnreachableError);
  const message = (err as Error).message;
  if (process.env.SHOW_LINES) console.log(message);
  expect(message).not.toContain("\n");
  expect(message).not.toContain(PASSWORD);
  return { message, retries: warnings.slice(before) };
}

describe("the modes against a TLS server", () => {
  test("verify-full with the right CA connects over TLS, by address and by name", async () => {
    expect(await sessionUsesTls(url("127.0.0.1", `sslmode=verify-full&sslrootcert=${pg.caFile}`))).toBe(true);
    expect(await sessionUsesTls(url("localhost", `sslmode=verify-full&sslrootcert=${pg.caFile}`))).toBe(true);
  });

  test("verify-full with a wrong CA fails at once with one line", async () => {
    const { message, retries } = await refusal(url("127.0.0.1", `sslmode=verify-full&sslrootcert=${pg.wrongCaFile}`));
    expect(message).toStartWith(
      `DATABASE_URL: TLS to 127.0.0.1:${pg.port}/postgres failed with sslmode=verify-full, sslrootcert=${pg.wrongCaFile}:`,
    );
    expect(message).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|SELF_SIGNED_CERT_IN_CHAIN/);
    // At once: the first attempt ends it, no "retrying" line before it.
    expect(message).toEndWith("not retrying");
    expect(retries).toEqual([]);
    expect(warnings).toEqual([]);
  });

  test("a certificate for another host: verify-full refuses it (the name), verify-ca accepts it (the chain)", async () => {
    const { message } = await refusal(url("127.0.0.2", `sslmode=verify-full&sslrootcert=${pg.caFile}`));
    expect(message).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
    expect(message).toContain("127.0.0.2");
    expect(await sessionUsesTls(url("127.0.0.2", `sslmode=verify-ca&sslrootcert=${pg.caFile}`))).toBe(true);
    // verify-ca still checks the chain.
    expect((await refusal(url("127.0.0.2", `sslmode=verify-ca&sslrootcert=${pg.wrongCaFile}`))).message).toContain(
      "sslmode=verify-ca",
    );
  });

  test("require connects without a CA (encrypted, unverified); with a root certificate it verifies the chain, as libpq", async () => {
    expect(await sessionUsesTls(url("127.0.0.2", "sslmode=require"))).toBe(true);
    expect((await refusal(url("127.0.0.1", `sslmode=require&sslrootcert=${pg.wrongCaFile}`))).message).toContain(
      "sslmode=require",
    );
  });

  test("PGSSLROOTCERT and PGSSLMODE stand in for URL parameters the URL does not have", async () => {
    const t = databaseTls(url("127.0.0.1", ""), { PGSSLMODE: "verify-full", PGSSLROOTCERT: pg.caFile });
    expect(t.mode).toBe("verify-full");
    expect(t.rootCert).toBe(pg.caFile);
    const u = databaseTls(url("127.0.0.1", `sslmode=verify-full&sslrootcert=${pg.caFile}`), {
      PGSSLMODE: "disable",
      PGSSLROOTCERT: "/nope",
    });
    expect([u.mode, u.rootCert]).toEqual(["verify-full", pg.caFile]);
    // The libpq parameters never reach the server as run-time settings.
    expect(new URL(u.url).search).toBe("");
  });

  test("the pool verifies too (not only the start-up check): a wrong CA or another host fails every statement", async () => {
    for (const [host, query] of [
      ["127.0.0.1", `sslmode=verify-full&sslrootcert=${pg.wrongCaFile}`],
      ["127.0.0.2", `sslmode=verify-full&sslrootcert=${pg.caFile}`],
    ] as const) {
      const { sql } = connect(url(host, query), { max: 1 });
      try {
        const err = (await sql`select 1`.then(
          () => undefined,
          (e: unknown) => e,
        )) as { code?: string };
        expect(err?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|ERR_TLS_CERT_ALTNAME_INVALID/);
      } finally {
        await sql.end({ timeout: 1 });
      }
    }
  });

  test("disable stays on plain TCP", async () => {
    expect(await sessionUsesTls(url("127.0.0.1", "sslmode=disable"))).toBe(false);
  });
});

test("unusable TLS settings are named in one line", () => {
  const bad = (q: string) => {
    try {
      databaseTls(`postgres://app:${PASSWORD}@127.0.0.1:5432/app?${q}`, {});
    } catch (e) {
      expect(e).toBeInstanceOf(DatabaseTlsError);
      expect((e as Error).message).not.toContain(PASSWORD);
      return (e as Error).message;
    }
    throw new Error(`accepted ${q}`);
  };
  expect(bad("sslmode=verify")).toContain(
    "sslmode=verify is not one of disable, allow, prefer, require, verify-ca, verify-full",
  );
  expect(bad("sslmode=verify-full")).toContain("needs the CA bundle");
  expect(bad("sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem")).toContain(
    "sslrootcert=/nonexistent/ca.pem cannot be read (ENOENT)",
  );
  expect(bad("sslmode=require&sslrootcert=system")).toContain("sslrootcert=system needs sslmode=verify-full");
  expect(bad("sslmode=require&sslcert=/c.pem")).toContain("sslcert is not supported");
  expect(databaseTls("postgres://a@h/db?sslrootcert=system", {}).mode).toBe("verify-full");
  expect(databaseTls("postgres://a@h/db", {}).ssl).toBe(false);
});

test("the service refuses to start on a wrong CA: one error line naming DATABASE_URL, exit 1", async () => {
  const p = spawnService({
    DATABASE_URL: url("127.0.0.1", `sslmode=verify-full&sslrootcert=${pg.wrongCaFile}`),
    SECRETS_KEY: randomBytes(32).toString("base64url"),
    PORT: String(freePort()),
  });
  procs.push(p);
  expect(await p.exited).toBe(1);
  const errors = p.lines().filter((l) => l.level === "error");
  expect(errors).toHaveLength(1);
  expect(errors[0]!.msg).toStartWith("DATABASE_URL: TLS to 127.0.0.1");
  expect(p.lines().filter((l) => l.msg === "database not reachable; retrying")).toEqual([]);
  expect(p.stdout()).not.toContain(PASSWORD);
  expect(p.stderr()).toBe("");
});

// Last: the same server restarted without TLS (the machine's own PostgreSQL may or may not have ssl=on).
test("require against a server without TLS fails at once with one line", async () => {
  pg.restart(false);
  expect(await sessionUsesTls(url("127.0.0.1", "sslmode=disable"))).toBe(false);
  const { message, retries } = await refusal(url("127.0.0.1", "sslmode=require"));
  expect(message).toBe(
    `DATABASE_URL: TLS to 127.0.0.1:${pg.port}/postgres failed with sslmode=require: TLS_NOT_OFFERED: the server does not accept TLS (it answered the SSLRequest with N); not retrying`,
  );
  expect(retries).toEqual([]); // at once: the first attempt ends it
  // prefer falls back to plain TCP, as libpq's default does.
  expect(await sessionUsesTls(url("127.0.0.1", "sslmode=prefer"))).toBe(false);
}, 30_000);
