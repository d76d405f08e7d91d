/**
 * What an operator reads when a start goes wrong, with real processes on loopback: a bad configuration names
 * each variable and what is wrong with it, never a value (the database password, SECRETS_KEY, METRICS_TOKEN);
 * a database refusal does not print the password either; a second process on a port (PORT, SANDBOX_PORT) in use refuses to start;
 * a body trickled slower than BODY_TIMEOUT_MS is answered 408 (docs/deployment.md).
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { createAccount, createApiKey } from "../../src/modules/accounts/service.ts";
import { parseRawResponse, type RawResponse } from "../helpers/raw-http.ts";
import { freePort, servicesOnTestDatabase, type Proc } from "./process.ts";

const services = servicesOnTestDatabase();
const spawn = services.spawn;
const key = () => randomBytes(32).toString("base64url");
/** The key of every process on the test database (the first start stores its check value). */
const DB_KEY = key();
const printed = (p: Proc) => p.stdout() + p.stderr();

test("a bad configuration names each variable and its problem, and prints none of the values", async () => {
  const password = `pw-${randomBytes(9).toString("hex")}`;
  const secretsKey = `${key()} `; // a trailing space: the usual slip when pasting
  const metricsToken = `mt${randomBytes(4).toString("hex")}`; // 10 characters: too short
  const p = spawn({
    DATABASE_URL: `postgresx://app:${password}@127.0.0.1:5432/app`,
    SECRETS_KEY: secretsKey,
    METRICS_TOKEN: metricsToken,
  });
  expect(await p.exited).toBe(1);
  for (const secret of [password, secretsKey.trim(), metricsToken]) expect(printed(p)).not.toContain(secret);
  const lines = p.lines();
  expect(lines).toHaveLength(1);
  const problems = Object.fromEntries(
    lines[0]!.problems.map((x: { variable: string; detail: string }) => [x.variable, x.detail]),
  );
  expect(Object.keys(problems).sort()).toEqual(["DATABASE_URL", "METRICS_TOKEN", "SECRETS_KEY"]);
  expect(problems.DATABASE_URL).toBe("must be a URL starting with postgres:// or postgresql://");
  expect(problems.SECRETS_KEY).toContain("white space at its start or end");
  expect(problems.METRICS_TOKEN).toBe("must be at least 16 characters long");
  for (const v of ["DATABASE_URL", "SECRETS_KEY", "METRICS_TOKEN"]) expect(lines[0]!.msg).toContain(v);
  expect(p.stderr()).toBe("");
});

test("a DATABASE_URL that does not parse is named as such, without its text", async () => {
  const password = `pw-${randomBytes(9).toString("hex")}`;
  const p = spawn({ DATABASE_URL: `postgres://app:${password}@[127.0.0.1/app`, SECRETS_KEY: key() });
  expect(await p.exited).toBe(1);
  expect(printed(p)).not.toContain(password);
  const line = p.lines().at(-1)!;
  expect(line.problems).toEqual([{ variable: "DATABASE_URL", detail: expect.stringContaining("is not a valid URL") }]);
  expect(line.msg).not.toContain("start failed");
});

test("a database that refuses the connection: one line without the password", async () => {
  const password = `pw-${randomBytes(9).toString("hex")}`;
  // The test cluster trusts loopback, so the password is accepted and the missing database is the refusal.
  const url = `postgres://postgres:${password}@127.0.0.1:5432/ct_no_such_db_${randomBytes(4).toString("hex")}`;
  const p = spawn({
    DATABASE_URL: url,
    SECRETS_KEY: key(),
    DB_CONNECT_TIMEOUT_SECONDS: "2",
    HOST: "127.0.0.1",
    PORT: String(freePort()),
  });
  expect(await p.exited).toBe(1);
  expect(printed(p)).not.toContain(password);
  expect(p.lines().at(-1)).toMatchObject({ level: "error", msg: expect.stringContaining("refused the connection") });
});

test("a second service on a port in use refuses to start with one line naming the port, and exits non-zero", async () => {
  const port = freePort();
  const env = {
    DATABASE_URL: services.db().url,
    SECRETS_KEY: DB_KEY,
    TRUST_PROXY: "1",
    HOST: "127.0.0.1",
    PORT: String(port),
    COURIER_MODE: "sandbox",
    ROLE: "api",
  };
  const first = spawn(env);
  const listening = await first.waitForLine((l) => String(l.msg).startsWith("listening on"), 30_000);
  // A URL a reader can copy; the proxy note after it, not inside its scheme.
  expect(listening.msg).toBe(`listening on http://127.0.0.1:${port} (plain HTTP behind a TLS-terminating proxy)`);
  const second = spawn(env);
  expect(await second.exited).toBe(1);
  const last = second.lines().at(-1)!;
  expect(last.level).toBe("error");
  expect(last.msg).toContain(`PORT=${port}`);
  expect(last.msg).toContain("already in use");
  expect(second.lines().some((l) => String(l.msg).startsWith("listening on"))).toBe(false);
  expect(second.stderr()).toBe("");
  // The first one still answers.
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
});

test("a SANDBOX_PORT in use: one line naming the variable and the port, no stack, exit 1", async () => {
  const port = freePort();
  const holder = Bun.serve({ hostname: "127.0.0.1", port, reusePort: false, fetch: () => new Response("held") });
  try {
    const p = spawn({
      DATABASE_URL: services.db().url,
      SECRETS_KEY: DB_KEY,
      TRUST_PROXY: "1",
      HOST: "127.0.0.1",
      PORT: String(freePort()),
      COURIER_MODE: "sandbox",
      SANDBOX_PORT: String(port),
      ROLE: "api",
    });
    expect(await p.exited).toBe(1);
    const last = p.lines().at(-1)!;
    expect(last.level).toBe("error");
    expect(last.msg).toContain(`SANDBOX_PORT=${port}`);
    expect(last.msg).toContain(`127.0.0.1:${port} is already in use`);
    expect(JSON.stringify(last)).not.toContain("    at ");
    expect(p.lines().some((l) => String(l.msg).startsWith("listening on"))).toBe(false);
    expect(p.stderr()).toBe("");
  } finally {
    await holder.stop(true);
  }
});

/**
 * Sends the head and `first` body bytes, then one more byte every `everyMs` (the slow client itself) until the
 * server closes the connection. Resolves with the response and whether it was complete before the close.
 */
function trickle(
  port: number,
  head: string,
  first: string,
  everyMs: number,
): Promise<{ res: RawResponse; complete: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let timer: ReturnType<typeof setInterval> | undefined;
    const finish = () => {
      clearInterval(timer);
      socket.destroy();
      const res = parseRawResponse(Buffer.concat(chunks).toString("latin1"));
      const complete = !!res.status && Buffer.byteLength(res.body) >= Number(res.headers["content-length"] ?? Infinity);
      resolve({ res, complete });
    };
    socket.on("data", (c: Buffer) => void chunks.push(c));
    socket.on("end", finish);
    socket.on("error", finish);
    socket.write(head + first);
    timer = setInterval(() => socket.writable && socket.write("a"), everyMs);
  });
}

test("a body slower than BODY_TIMEOUT_MS gets 408 REQUEST_TIMEOUT and the connection closes (API and dashboard form)", async () => {
  const port = freePort();
  const p = spawn({
    DATABASE_URL: services.db().url,
    SECRETS_KEY: DB_KEY,
    TRUST_PROXY: "1",
    HOST: "127.0.0.1",
    PORT: String(port),
    COURIER_MODE: "sandbox",
    ROLE: "api",
    BODY_TIMEOUT_MS: "600",
  });
  await p.waitForLine((l) => String(l.msg).startsWith("listening on"), 30_000);
  const headers = (path: string, type: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Proto: https\r\nContent-Type: ${type}\r\nContent-Length: 5000\r\n\r\n`;

  // The public sign-in form: no session needed to reach the body.
  const form = await trickle(
    port,
    headers("/dashboard/sign-in", "application/x-www-form-urlencoded"),
    "email=a%40b.example&password=",
    100,
  );
  // Answered whole, then the server closed (trickle resolves on the close). Which deadline answered: the API's
  // 408 below names it, and both read bodies under the one process-wide BODY_TIMEOUT_MS.
  expect(form.complete).toBe(true);
  expect(form.res.status).toBe(408);
  expect(form.res.headers.connection).toBe("close");

  // A /v1 body: the key is checked first (a wrong key is 401 before any body is read), so make one.
  const acc = await createAccount(services.db().db, {
    email: `slow-${randomBytes(4).toString("hex")}@example.com`,
    plan: "growth",
  });
  const { key: devKey } = await createApiKey(services.db().db, acc.id);
  const api = await trickle(
    port,
    headers("/v1/webhooks", "application/json").replace("\r\n\r\n", `\r\nX-API-Key: ${devKey}\r\n\r\n`),
    '{"url":"',
    100,
  );
  expect(api.complete).toBe(true);
  expect(api.res.status).toBe(408);
  // The deadline passed in (BODY_TIMEOUT_MS=600), not the 10 s default nor an idle timeout.
  expect(JSON.parse(api.res.body)).toEqual({
    success: false,
    error: { code: "REQUEST_TIMEOUT", message: "The request body did not arrive within 0.6 s; send it at once." },
  });
  expect(api.res.headers.connection).toBe("close");
});
