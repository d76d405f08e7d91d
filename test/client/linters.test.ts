/**
 * The served /openapi.json passes two independent linters with no finding:
 * Spectral's `spectral:oas` ruleset and Redocly's `recommended` rules (both
 * run as their own CLIs, pinned devDependencies). The service runs with a
 * PUBLIC_BASE_URL that is not localhost, so even Redocly's
 * `no-server-example.com` warning is absent; with the default localhost URL
 * it is the only finding. The error examples are worded as the service words
 * them: each error a test can provoke on the real server carries exactly the
 * documented example message.
 *
 * NETWORK SAFETY: the service listens on 127.0.0.1; the linters read a local
 * file, Redocly with its telemetry and update check switched off.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccount, createApiKey, setStatus, setUsage } from "../../src/modules/accounts/service.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startService, type RunningService } from "./service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const LINT = join(import.meta.dir, "lint");
const PUBLIC = "https://track.couriers.in";
let tdb: TestDatabase;
let svc: RunningService;
let dir: string;
let docText: string;

beforeAll(async () => {
  tdb = await createTestDatabase({ max: 1 });
  svc = await startService(
    { PUBLIC_BASE_URL: PUBLIC, COURIER_TIMEOUT_MS: "3000", COURIER_ASYNC_BUDGET_MS: "4000" },
    20_000,
    { tdb, expectKey: true },
  );
  dir = mkdtempSync(join(tmpdir(), "ct-lint-"));
  docText = await (await svc.fetch("/openapi.json")).text();
  await Bun.write(join(dir, "openapi.json"), docText);
}, 60_000);

afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
  await tdb?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Runs a linter CLI from node_modules/.bin and returns its stdout (JSON). */
async function run(bin: string, args: string[]): Promise<string> {
  const proc = Bun.spawn([join(ROOT, "node_modules", ".bin", bin), ...args], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (!out.trim()) throw new Error(`${bin} printed nothing; stderr:\n${err}`);
  return out;
}

const spectral = (file: string) =>
  run("spectral", [
    "lint",
    "--ruleset",
    join(LINT, "spectral.yaml"),
    "--format",
    "json",
    "--fail-severity",
    "hint",
    "--quiet",
    file,
  ]);
const redocly = (file: string) =>
  run("redocly", ["lint", "--config", join(LINT, "redocly.yaml"), "--format", "json", file]);
const findings = (out: string) =>
  JSON.parse(out.slice(out.indexOf("["))) as { code: string; path: string[]; message: string }[];
const summary = (out: string) =>
  JSON.parse(out) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; location: { pointer: string }[] }[];
  };

test("Spectral (spectral:oas) and Redocly (recommended) find nothing in the served document", async () => {
  const [s, r] = await Promise.all([spectral("openapi.json"), redocly("openapi.json")]);
  expect(findings(s).map((f) => `${f.code} ${f.path.join(".")}: ${f.message}`)).toEqual([]);
  const red = summary(r);
  expect(red.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).toEqual([]);
  expect(red.totals).toMatchObject({ errors: 0, warnings: 0 });
}, 60_000);

test("with the default localhost server URL, Redocly's only finding is that URL", async () => {
  const doc = JSON.parse(docText);
  doc.servers = [{ url: "https://localhost:8443" }];
  await Bun.write(join(dir, "localhost.json"), JSON.stringify(doc));
  const red = summary(await redocly("localhost.json"));
  expect(red.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).toEqual([
    "no-server-example.com #/servers/0/url",
  ]);
}, 60_000);

test("the document names a licence, has no empty tag, and its query numbers and headers say what is enforced", () => {
  const doc = JSON.parse(docText);
  expect(doc.info.license.name).toBeTruthy();
  const used = new Set(
    Object.values(doc.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((ops) =>
      Object.values(ops).flatMap((op) => op.tags ?? []),
    ),
  );
  expect(doc.tags.map((t: { name: string }) => t.name).filter((name: string) => !used.has(name))).toEqual([]);
  const limit = doc.paths["/v1/webhooks/{webhook_id}/deliveries"].get.parameters.find(
    (p: { name: string }) => p.name === "limit",
  );
  expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 20 });
  expect(limit.schema.anyOf).toBeUndefined();
  // What the service enforces, stated: the Idempotency-Key's characters, the webhook URL's https and length.
  const key = doc.paths["/v1/webhooks"].post.parameters.find((p: { name: string }) => p.name === "Idempotency-Key");
  expect(key.schema).toMatchObject({ type: "string", minLength: 1, maxLength: 255, pattern: "^[!-~]+$" });
  expect(doc.components.schemas.WebhookCreate.properties.url).toMatchObject({
    type: "string",
    maxLength: 2048,
    pattern: expect.stringMatching(/^\^\[Hh\]\[Tt\]/),
  });
  expect(docText).not.toContain("localhost:8443");
});

/** The documented example message for `code` (the first operation that documents it). */
function documented(code: string): string {
  const doc = JSON.parse(docText);
  for (const ops of Object.values(doc.paths as Record<string, Record<string, any>>))
    for (const op of Object.values(ops))
      for (const r of Object.values(op.responses ?? {}) as any[]) {
        const ex = r.content?.["application/json"]?.examples?.[code];
        if (ex) return ex.value.error.message;
      }
  throw new Error(`no example for ${code}`);
}

test("each error the real server gives here carries the documented example's wording", async () => {
  const acc = await createAccount(tdb.db, { email: `free-${Bun.randomUUIDv7().slice(-8)}@example.com`, plan: "free" });
  const { key } = await createApiKey(tdb.db, acc.id);
  const get = async (path: string, k: string | undefined = key, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (k) headers.set("x-api-key", k);
    const body = (await (await svc.fetch(path, { ...init, headers })).json()) as {
      error: { code: string; message: string };
    };
    return body.error;
  };
  const track = (courier: string, awb: string, k?: string) =>
    get(`/v1/track?courier=${courier}&tracking_number=${awb}`, k);
  const live = [
    await get("/v1/couriers", "ctk_not-a-real-key"),
    await track("delhivry", "1234567890120"),
    await track("delhivery", "12"),
    await track("delhivery", "12345678904"),
    await track("delhivery", "12345678906"),
    await track("delhivery", "12345678905"),
    await get("/v1/webhooks/wh_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f"),
    await get("/v1/webhooks", key, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ description: "x".repeat(70_000) }),
    }),
  ];
  // The demo's sixth request within the hour from this address.
  for (let i = 0; i < 5; i++) await svc.fetch("/demo/track?courier=dhl&tracking_number=1234567890");
  live.push(await get("/demo/track?courier=dhl&tracking_number=1234567890", ""));
  await setUsage(tdb.db, acc.id, 100, Date.now());
  live.push(await track("delhivery", "1234567890120"));
  // A second account, set to needs_attention before its key is ever used: the service process has nothing
  // cached for it, so no NOTIFY has to reach it first (src/modules/accounts/auth-cache.ts).
  const held = await createAccount(tdb.db, { email: `held-${Bun.randomUUIDv7().slice(-8)}@example.com`, plan: "free" });
  const { key: heldKey } = await createApiKey(tdb.db, held.id);
  await setStatus(tdb.db, held.id, "needs_attention");
  live.push(await track("delhivery", "1234567890120", heldKey));
  expect(live.map((e) => e.code)).toEqual([
    "INVALID_API_KEY",
    "COURIER_NOT_FOUND",
    "INVALID_TRACKING_NUMBER",
    "TRACKING_NOT_FOUND",
    "SERVICE_ERROR",
    "TIMEOUT",
    "WEBHOOK_NOT_FOUND",
    "PAYLOAD_TOO_LARGE",
    "DEMO_RATE_LIMITED",
    "QUOTA_EXCEEDED",
    "ACCOUNT_NEEDS_ATTENTION",
  ]);
  for (const e of live) expect(documented(e.code), e.code).toBe(e.message);
  expect(documented("QUOTA_EXCEEDED")).toStartWith(
    `Monthly quota of 100 tracking requests used up on the Free plan. Upgrade at ${PUBLIC}/`,
  );
}, 60_000);
