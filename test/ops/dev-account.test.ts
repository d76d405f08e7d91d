/**
 * The sandbox development account (docs/deployment.md, Roles): only a process that serves the public port (ROLE=api
 * or the all-in-one default) creates it and prints its key and sign-in link, and the link carries that process's
 * port. A ROLE=worker process on the same sandbox database creates nothing and prints no link.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { freePort, insecureFetch, spawnService, type Proc } from "./process.ts";

const dbs: TestDatabase[] = [];
const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ct-dev-"));
  dirs.push(d);
  return d;
};
const procs: Proc[] = [];
beforeAll(async () => {
  dbs.push(await createTestDatabase({ max: 1 }), await createTestDatabase({ max: 1 }));
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  await Promise.all(dbs.map((d) => d.drop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const spawn = (env: Record<string, string>) => {
  const p = spawnService({ COURIER_MODE: "sandbox", SANDBOX_ASYNC_SECONDS: "1", ...env });
  procs.push(p);
  return p;
};
const devAccounts = async (tdb: TestDatabase) =>
  (await tdb.sql`select count(*)::int as n from accounts where email = 'dev@localhost'`)[0]!.n as number;
const signInLine = (l: Record<string, any>) =>
  typeof l.msg === "string" && l.msg.startsWith("dashboard sign-in for dev@localhost");

test("a sandbox worker creates no development account and prints no key or link; the API process then does, with its port", async () => {
  const tdb = dbs[0]!;
  const secretsKey = randomBytes(32).toString("base64url");
  const worker = spawn({
    DATABASE_URL: tdb.url,
    SECRETS_KEY: secretsKey,
    ROLE: "worker",
    DATA_DIR: dataDir(),
    ADMIN_PORT: String(freePort()),
  });
  await worker.waitForLine((l) => l.msg === "worker started", 30_000);
  expect(worker.lines().find((l) => l.msg === "couriers")).toMatchObject({ mode: "sandbox" });
  expect(worker.stdout()).not.toContain("development account");
  expect(worker.stdout()).not.toContain("API key (shown once)");
  expect(worker.stdout()).not.toContain("password-link");
  expect(await devAccounts(tdb)).toBe(0);

  const port = freePort();
  const api = spawn({
    DATABASE_URL: tdb.url,
    SECRETS_KEY: secretsKey,
    ROLE: "api",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir(),
  });
  const link = new URL(/https:\/\/\S+$/.exec((await api.waitForLine(signInLine, 30_000)).msg)![0]);
  expect(`${link.origin}${link.pathname.replace(/[^/]+$/, "")}`).toBe(
    `https://localhost:${port}/dashboard/password-link/`,
  );
  expect(api.stdout()).toContain(
    "development account created on plan growth: dev@localhost; API key (shown once): ctk_",
  );
  expect(await devAccounts(tdb)).toBe(1);
  await api.waitForLine((l) => typeof l.msg === "string" && l.msg.startsWith("listening on"), 30_000);
  // The printed link opens on the API process's own port.
  expect((await insecureFetch(`https://127.0.0.1:${port}${link.pathname}`)).status).toBe(200);

  worker.kill("SIGTERM");
  api.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
  expect(await api.exited).toBe(0);
  expect(worker.stdout()).not.toContain("password-link");
}, 90_000);

test("the all-in-one process prints the sign-in link on its own port (PUBLIC_BASE_URL unset)", async () => {
  const tdb = dbs[1]!;
  const port = freePort();
  const all = spawn({
    DATABASE_URL: tdb.url,
    SECRETS_KEY_GENERATE: "single-node",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir(),
  });
  const line = await all.waitForLine(signInLine, 30_000);
  expect(line.msg).toMatch(new RegExp(`: https://localhost:${port}/dashboard/password-link/[A-Za-z0-9_-]{20,}$`));
  all.kill("SIGTERM");
  expect(await all.exited).toBe(0);
}, 60_000);
