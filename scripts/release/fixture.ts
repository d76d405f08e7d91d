/**
 * The upgrade fixture of the code in this checkout (docs/releases.md, "Upgrade fixtures"): starts the service
 * (`bun run src/main.ts`) on a fresh database, writes realistic data through its API, stops it, and dumps the
 * database (schema and data, `pg_dump` plain SQL) with a manifest into `test/upgrade/<version>/`.
 *
 *   bun run release:fixture [--version 1.2.0] [--out dir] [--pg postgres://postgres@127.0.0.1:5432/postgres]
 *
 * Needs PostgreSQL's client programs (`pg_dump`) and a server where the role may create databases.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import postgres from "postgres";
import selfsigned from "selfsigned";
import { EVENT_TYPES } from "../../src/domain/events.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const FIXTURES_DIR = join(ROOT, "test", "upgrade");
/** The dump's file name inside a fixture folder. */
export const DUMP_FILE = "dump.sql.gz";
export const MANIFEST_FILE = "manifest.json";

/** What a fixture knows besides its dump: the keys to read it back with, and what it must still hold. */
export interface FixtureManifest {
  version: string;
  generated_at: string;
  /** The commit whose code wrote the fixture (the upgrade test runs that code on the migrated schema). */
  commit?: string;
  /** The SECRETS_KEY the webhook secrets are sealed with (a throw-away key made for the fixture). */
  secrets_key: string;
  accounts: { email: string; plan: string; api_key: string }[];
  /** Rows per table of the public schema (partitioned tables counted through their parent). */
  row_counts: Record<string, number>;
  webhooks: { id: string; account_email: string; mode: string; receiver: "up" | "down"; secret: string }[];
  /** Deliveries left pending by the receiver that was down: each must go out exactly once after the upgrade. */
  pending_deliveries: { id: string; webhook_id: string; event_id: string | null; attempts: number }[];
  /** Followed shipments and how many checkpoints each had. */
  shipments: { account_email: string; courier: string; tracking_number: string; checkpoints: number }[];
}

const RECEIVER_SAN = [
  { type: 2, value: "localhost" },
  { type: 7, ip: "127.0.0.1" },
];

/** A free TCP port on loopback (bound, then released). */
function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

/** A cookie-keeping HTTPS client of the service (self-signed certificate accepted: it is our own, on loopback). */
class Browser {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: string) {}
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set("cookie", [...this.jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(`${this.base}${path}`, {
      ...init,
      headers,
      redirect: "manual",
      tls: { rejectUnauthorized: false },
    } as RequestInit);
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      if (/max-age=0/i.test(c)) this.jar.delete(pair!.slice(0, i));
      else this.jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return res;
  }
  /** GETs `page`, then POSTs `fields` to `action` as a form with the page's CSRF token; returns the HTML. */
  async form(page: string, action: string, fields: Record<string, string>): Promise<[number, string]> {
    const html = await (await this.request(page)).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (!csrf) throw new Error(`no CSRF field on ${page}`);
    const res = await this.request(action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
    return [res.status, await res.text()];
  }
}

/** The service under construction of the fixture: a child process on loopback. */
interface Service {
  base: string;
  devKey: string;
  api<T = any>(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; data: T }>;
  stop(): Promise<number | null>;
}

async function startService(env: Record<string, string>): Promise<Service> {
  const port = freePort();
  const base = `https://127.0.0.1:${port}`;
  const proc = spawn("bun", ["run", "src/main.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout.on("data", (b: Buffer) => (out += b.toString()));
  proc.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  const stop = async () => {
    if (proc.exitCode === null) proc.kill("SIGTERM");
    return exited;
  };
  const api: Service["api"] = async (key, method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      tls: { rejectUnauthorized: false },
    } as RequestInit);
    const text = await res.text();
    if (res.status >= 400) return { status: res.status, data: text as never };
    return { status: res.status, data: text ? JSON.parse(text).data : undefined };
  };
  try {
    const devKey = await until(
      "the service to start",
      async () => {
        if (proc.exitCode !== null) throw new Error(`the service exited (${proc.exitCode}):\n${out}`);
        const key = /API key \(shown once\): (ctk_[A-Za-z0-9_-]+)/.exec(out)?.[1];
        const ok = await fetch(`${base}/healthz`, { tls: { rejectUnauthorized: false } } as RequestInit).then(
          (r) => r.ok,
          () => false,
        );
        return ok && key ? key : undefined;
      },
      60_000,
    );
    return { base, devKey, api, stop };
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}; the service wrote:\n${out.slice(-4000)}`);
  }
}

function expectStatus(what: string, got: number, want: number, body: unknown = ""): void {
  if (got !== want) throw new Error(`${what}: HTTP ${got}, expected ${want} ${JSON.stringify(body)}`);
}

/** Runs the admin CLI of this checkout on `env`'s database; returns its JSON answer. */
function admin(env: Record<string, string>, args: string[]): any {
  const r = spawnSync("bun", ["run", "src/cli/admin.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...env },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`admin ${args[0]} failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

/** The service's tables (not partitions) and their row counts. */
export async function rowCounts(sql: postgres.Sql): Promise<Record<string, number>> {
  const tables = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
  const counts: Record<string, number> = {};
  for (const { name } of tables)
    counts[name] = Number((await sql.unsafe(`select count(*)::int as n from "${name}"`))[0]!.n);
  return counts;
}

/**
 * `pg_dump` of `url` as plain SQL, without the `\restrict` guard lines that pg_dump 15.14/16.10/17.6 and later
 * write (psql meta-commands that older psql refuses; the dump is our own, so nothing needs the guard).
 * @throws when pg_dump fails (its stderr in the message).
 */
export function dumpDatabase(url: string): string {
  const r = spawnSync("pg_dump", ["--no-owner", "--no-privileges", "--format=plain", "--dbname", url], {
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`pg_dump failed (${r.status}): ${r.stderr}`);
  return r.stdout
    .split("\n")
    .filter((l) => !/^\\(un)?restrict /.test(l))
    .join("\n");
}

/** Writes realistic data through the running service's API; returns what the manifest records of it. */
async function populate(svc: Service, env: Record<string, string>, receiverUp: string, receiverDown: string) {
  const accounts: FixtureManifest["accounts"] = [{ email: "dev@localhost", plan: "growth", api_key: svc.devKey }];
  // An operator-made account (admin CLI) on a plan with live webhooks.
  const ops = admin(env, ["create-account", "--email", "ops@example.com", "--plan", "business"]);
  accounts.push({ email: "ops@example.com", plan: "business", api_key: ops.api_key });
  // A self-service account: dashboard sign-up, then a second key from the Keys page (an `api_key_created` alert).
  const shop = new Browser(svc.base);
  const [signed, welcome] = await shop.form("/dashboard/sign-up", "/dashboard/sign-up", {
    email: "shop@example.com",
    password: "correct horse battery staple",
  });
  expectStatus("sign-up", signed, 201);
  const shopKey = /value="(ctk_[A-Za-z0-9_-]{43})"/.exec(welcome)![1]!;
  const [made, keysPage] = await shop.form("/dashboard/keys", "/dashboard/keys", { name: "ci" });
  expectStatus("create key", made, 201);
  accounts.push({ email: "shop@example.com", plan: "free", api_key: shopKey });
  accounts.push({
    email: "shop@example.com",
    plan: "free",
    api_key: /value="(ctk_[A-Za-z0-9_-]{43})"/.exec(keysPage)![1]!,
  });

  const webhooks: FixtureManifest["webhooks"] = [];
  const hook = async (email: string, key: string, mode: string, receiver: "up" | "down", path: string) => {
    const url = `${receiver === "up" ? receiverUp : receiverDown}${path}`;
    const r = await svc.api(key, "POST", "/v1/webhooks", { url, events: [...EVENT_TYPES], mode, description: path });
    expectStatus(`create webhook ${path}`, r.status, 201, r.data);
    // One signing secret per account, shown with its first webhook only.
    const secret = webhooks.find((w) => w.account_email === email)?.secret ?? r.data.secret;
    webhooks.push({ id: r.data.id, account_email: email, mode, receiver, secret });
  };
  await hook("dev@localhost", svc.devKey, "live", "up", "/dev-up");
  await hook("dev@localhost", svc.devKey, "live", "down", "/dev-down");
  await hook("ops@example.com", ops.api_key, "live", "down", "/ops-down");
  await hook("shop@example.com", shopKey, "test", "up", "/shop-test");

  // Follows shared by two accounts: in transit, out for delivery, failed attempt, manifested, delivered; then
  // lookups (a delivered one is not followed).
  const numbers = ["1234567890121", "1234567890122", "1234567890263", "1234567890127", "1234567890120"];
  for (const [email, key] of [
    ["dev@localhost", svc.devKey],
    ["ops@example.com", ops.api_key],
  ] as const) {
    const body = { shipments: numbers.map((n) => ({ courier: "delhivery", tracking_number: n })) };
    const r = await svc.api(key, "POST", "/v1/shipments", body);
    expectStatus("follow", r.status, 202, r.data);
  }
  for (const [courier, n] of [
    ["ups", "1Z12345E0205277680"],
    ["dhl", "1234567891"],
  ] as const) {
    const r = await svc.api(shopKey, "GET", `/v1/track?courier=${courier}&tracking_number=${n}`);
    expectStatus(`track ${n}`, r.status, 200, r.data);
  }
  // History: a lookup (a follow) of numbers each account alone follows (the sandbox advances no shared
  // shipment), then the simulator's next steps, each a checkpoint and an event for that account's live webhooks.
  const own: [string, string][] = [
    [svc.devKey, "1234567890311"],
    [svc.devKey, "1234567890312"],
    [svc.devKey, "1234567890323"],
    [ops.api_key, "1234567890411"],
    [ops.api_key, "1234567890412"],
  ];
  for (const [key, n] of own) {
    const r = await svc.api(key, "GET", `/v1/track?courier=delhivery&tracking_number=${n}`);
    expectStatus(`track ${n}`, r.status, 200, r.data);
    const steps: number[] = [];
    for (let step = 0; step < 3; step++)
      steps.push((await svc.api(key, "POST", `/v1/sandbox/shipments/delhivery/${n}/advance`)).status);
    // 409 once the script has no step left; the first step must go through.
    if (steps[0] !== 200 || steps.some((st) => st !== 200 && st !== 409))
      throw new Error(`advance ${n}: HTTP ${steps.join(", ")}`);
  }
  // An ETA, a note of the customer's own, a rotated signing secret (a `secret_rotated` alert).
  const patched = await svc.api(svc.devKey, "PATCH", "/v1/shipments/delhivery/1234567890311", {
    reference: "order-1001",
  });
  if (patched.status >= 500) throw new Error(`update shipment: HTTP ${patched.status}`);
  const rotated = await svc.api(ops.api_key, "POST", "/v1/webhooks/rotate-secret");
  expectStatus("rotate secret", rotated.status, 200, rotated.data);
  for (const w of webhooks) if (w.account_email === "ops@example.com") w.secret = rotated.data.secret;
  return { accounts, webhooks };
}

/**
 * Builds the fixture of `version` into `outDir` from a temporary database on the server `adminUrl`.
 * @throws when the service does not start, an API call fails, or pg_dump fails; the database is dropped anyway.
 */
export async function writeFixture(opts: { version: string; outDir: string; adminUrl: string }): Promise<void> {
  const dbName = `ct_fixture_${Bun.randomUUIDv7().replaceAll("-", "").slice(-12)}`;
  const url = new URL(opts.adminUrl);
  url.pathname = `/${dbName}`;
  const adminSql = postgres(opts.adminUrl, { max: 1, onnotice: () => {} });
  const work = mkdtempSync(join(tmpdir(), "ct-fixture-"));
  await adminSql.unsafe(`create database "${dbName}"`);
  const pems = await selfsigned.generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "subjectAltName", altNames: RECEIVER_SAN },
    ],
  } as never);
  writeFileSync(join(work, "ca.pem"), pems.cert);
  const up = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: pems.cert, key: pems.private },
    fetch: () => new Response("ok"),
  });
  const secretsKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const env: Record<string, string> = {
    DATABASE_URL: url.toString(),
    DATA_DIR: work,
    HOST: "127.0.0.1",
    COURIER_MODE: "sandbox",
    SANDBOX_ASYNC_SECONDS: "1",
    RECHECK_POLL_SECONDS: "1",
    SECRETS_KEY: secretsKey,
    LOG_LEVEL: "info", // the development key is printed at info
    PASSWORD_HASH_MEMORY_KIB: process.env.PASSWORD_HASH_MEMORY_KIB ?? "19456",
    WEBHOOK_CA_FILE: join(work, "ca.pem"),
    WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8,::1/128",
  };
  let svc: Service | undefined;
  try {
    svc = await startService(env);
    // Nothing listens on the "down" port: each first attempt there fails to connect, and the spec's schedule makes
    // the retry due a minute later, after the dump: the fixture carries deliveries pending and due.
    const { accounts, webhooks } = await populate(
      svc,
      env,
      `https://127.0.0.1:${up.port}`,
      `https://127.0.0.1:${freePort()}`,
    );
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      await until("every delivery to be attempted and every followed shipment looked up", async () => {
        const [r] = await sql`select (select count(*) from deliveries where attempts = 0 or lease_until is not null)
                                   + (select count(*) from shipments where last_checked_at is null) as n`;
        return Number(r!.n) === 0 ? true : undefined;
      });
      expectStatus("stop", (await svc.stop()) ?? -1, 0);
      svc = undefined;
      const pending = await sql<FixtureManifest["pending_deliveries"]>`
        select id, webhook_id, event_id, attempts from deliveries where state = 'pending' order by id`;
      if (pending.length === 0) throw new Error("no pending delivery: the fixture must carry some");
      const shipments = await sql<FixtureManifest["shipments"]>`
        select a.email as account_email, s.courier, s.tracking_number,
               s.checkpoint_count as checkpoints
        from follows f join shipments s on s.id = f.shipment_id join accounts a on a.id = f.account_id
        order by 1, 2, 3`;
      const manifest: FixtureManifest = {
        version: opts.version,
        generated_at: new Date().toISOString(),
        commit: spawnSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim() || undefined,
        secrets_key: secretsKey,
        accounts,
        row_counts: await rowCounts(sql),
        webhooks,
        pending_deliveries: pending.map((p) => ({ ...p })),
        shipments: shipments.map((r) => ({ ...r })),
      };
      mkdirSync(opts.outDir, { recursive: true });
      writeFileSync(join(opts.outDir, DUMP_FILE), gzipSync(dumpDatabase(url.toString()), { level: 9 }));
      writeFileSync(join(opts.outDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await svc?.stop();
    up.stop(true);
    await adminSql.unsafe(`drop database if exists "${dbName}" with (force)`);
    await adminSql.end({ timeout: 5 });
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      version: { type: "string" },
      out: { type: "string" },
      pg: { type: "string", default: process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
    },
  });
  const version = values.version ?? JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  const outDir = values.out ?? join(FIXTURES_DIR, version);
  await writeFixture({ version, outDir, adminUrl: values.pg! });
  console.log(`wrote the ${version} upgrade fixture to ${outDir}`);
}
