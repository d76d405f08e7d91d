/**
 * Postman: the collection served at /postman runs green with newman
 * against the real, running sandbox service, with what a customer would run,
 * `newman run c.json --insecure --env-var api_key=… --env-var webhook_url=…`,
 * as newman.run options in one Node process for the file (newman-driver.mjs).
 * The webhook URL is a real HTTPS receiver on loopback whose certificate the
 * service trusts (WEBHOOK_CA_FILE); loopback is allowed for this test only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startReceiver, testCert, type Receiver } from "../webhooks/receiver.ts";
import { startService, type RunningService } from "./service.ts";

let svc: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  const { caFile } = await testCert();
  svc = await startService({ WEBHOOK_CA_FILE: caFile, WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8,::1/128" });
}, 60_000);

afterAll(async () => {
  expect(await driver?.stop()).toBe(0);
  expect(await svc?.stop()).toBe(0);
  receiver?.stop();
}, 60_000);

interface Execution {
  item: { name: string };
  request: { method: string; url: { path: string[] } };
  response?: { code: number };
  assertions?: { assertion: string; error?: { message: string } }[];
}
interface NewmanRun {
  code: number;
  stdout: string;
  run: { failures: { error: { test?: string; message: string } }[]; executions: Execution[] };
}

/**
 * newman in one Node process for the file (newman-driver.mjs): each run is `newman run c.json --insecure
 * --env-var … --reporters cli,json --reporter-json-export report.json`, spelled as the options newman.run takes,
 * with the CLI's exit code. The README's own `npx newman run` command runs as a process in newman-readme.test.ts.
 */
const MARK = `--newman-run-done-${Bun.randomUUIDv7()}--`;
let driver: ReturnType<typeof startDriver> | undefined;
function startDriver() {
  const proc = Bun.spawn(["node", join(import.meta.dir, "newman-driver.mjs"), MARK], {
    cwd: join(import.meta.dir, "../.."),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  /** Sends one run's options; resolves with what newman printed and its exit code. */
  async function run(options: object): Promise<{ code: number; stdout: string }> {
    proc.stdin.write(`${JSON.stringify(options)}\n`);
    proc.stdin.flush();
    const done = new RegExp(`\\n${MARK} (\\d+)\\n`);
    for (let m = done.exec(buffered); ; m = done.exec(buffered)) {
      if (m) {
        const stdout = buffered.slice(0, m.index);
        buffered = buffered.slice(m.index + m[0].length);
        return { code: Number(m[1]), stdout };
      }
      const { value, done: ended } = await reader.read();
      if (ended) throw new Error(`the newman driver exited (${await proc.exited}):\n${buffered}`);
      buffered += decoder.decode(value, { stream: true });
    }
  }
  return { run, stop: () => (proc.stdin.end(), proc.exited) };
}

/** Fetches /postman and runs it with newman as a customer would, with `--env-var` for each of `vars`. */
async function newman(vars: Record<string, string>): Promise<NewmanRun> {
  const res = await svc.fetch("/postman");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-disposition")).toBe(
    'attachment; filename="courier-tracking-api.postman_collection.json"',
  );
  const dir = mkdtempSync(join(tmpdir(), "newman-"));
  const file = join(dir, "c.json");
  const report = join(dir, "report.json");
  writeFileSync(file, JSON.stringify(await res.json()));
  driver ??= startDriver();
  const { code, stdout } = await driver.run({
    collection: file,
    insecure: true,
    envVar: Object.entries(vars).map(([key, value]) => ({ key, value })),
    reporters: ["cli", "json"],
    reporter: { json: { export: report } },
  });
  return { code, stdout, run: JSON.parse(readFileSync(report, "utf8")).run };
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown>; tags?: string[] }>> };
const openapi = async () => (await (await svc.fetch("/openapi.json")).json()) as Doc;
const pathOf = (ex: Execution) => `/${ex.request.url.path.join("/")}`;

test("the collection carries the API key once, as collection-level auth, and public requests opt out", async () => {
  const collection = (await (await svc.fetch("/postman")).json()) as any;
  expect(collection.auth).toEqual({
    type: "apikey",
    apikey: [
      { key: "key", value: "X-API-Key", type: "string" },
      { key: "value", value: "{{api_key}}", type: "string" },
      { key: "in", value: "header", type: "string" },
    ],
  });
  const requests = (collection.item as any[]).flatMap((f) => f.item ?? [f]);
  for (const r of requests)
    expect(
      r.request.header.some((h: { key: string }) => h.key.toLowerCase() === "x-api-key"),
      r.name,
    ).toBe(false);
  const publicOnes = requests.filter((r) => r.request.auth?.type === "noauth").map((r) => r.request.url.path.join("/"));
  expect(publicOnes.sort()).toEqual(["billing/plans", "demo/track"]);
}, 60_000);

test("every request of the /postman collection answers its documented success status under newman", async () => {
  const doc = await openapi();
  const { code, stdout, run } = await newman({ api_key: svc.key, webhook_url: receiver.url("/newman") });
  if (code !== 0) console.error(stdout);
  expect(code).toBe(0);
  expect(run.failures).toEqual([]);
  const operationsInDoc = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  // One execution per request, plus what a script sends itself (Delete a webhook first waits for pending deliveries).
  expect(new Set(run.executions.map((ex) => ex.item.name)).size).toBe(operationsInDoc);
  for (const ex of run.executions) {
    // The request's path with the id filled in; map it back to the template to find the documented status.
    const path = pathOf(ex);
    const template = Object.keys(doc.paths).find(
      (p) =>
        new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path) &&
        doc.paths[p]![ex.request.method.toLowerCase()],
    );
    expect(template, `${ex.request.method} ${path}`).toBeDefined();
    const statuses = Object.keys(doc.paths[template!]![ex.request.method.toLowerCase()]!.responses);
    const documented = Number(statuses.find((s) => /^2\d\d$/.test(s)));
    expect(`${ex.item.name}: ${ex.response?.code}`).toBe(`${ex.item.name}: ${documented}`);
  }
  // The test fire reached the receiver, signed; the redeliver request sent the same event again (through the worker);
  // the audit sent its four cases, marked as such.
  const all = await receiver.waitFor("/newman", 6);
  expect(all.filter((h) => h.headers["x-webhook-audit"] === "true")).toHaveLength(4);
  const hits = all.filter((h) => h.headers["x-webhook-audit"] === undefined);
  expect(hits.length).toBe(2);
  for (const h of hits) {
    expect(h.headers["x-service-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(h.headers["x-webhook-mode"]).toBe("test");
  }
  expect(hits[1]!.json).toEqual(hits[0]!.json);
}, 60_000);

test("without webhook_url the run is green, the Webhooks folder is skipped with a message, and nothing webhook-related is sent", async () => {
  const doc = await openapi();
  // In the sandbox webhook_url defaults to the echo receiver: set it empty to leave it unset.
  const { code, stdout, run } = await newman({ api_key: svc.key, webhook_url: "" });
  if (code !== 0) console.error(stdout);
  expect(code).toBe(0);
  expect(run.failures).toEqual([]);
  expect(stdout).toContain("Webhooks folder skipped");
  expect(stdout).toContain("set webhook_url");
  const sent = run.executions.filter((ex) => ex.response).map(pathOf);
  expect(sent.filter((p) => p.startsWith("/v1/webhooks"))).toEqual([]);
  const others = Object.entries(doc.paths)
    .filter(([p]) => !p.startsWith("/v1/webhooks"))
    .reduce((n, [, ops]) => n + Object.keys(ops).length, 0);
  expect(sent.length).toBe(others);
  // Nothing was created (and so nothing was left behind).
  const list = (await (await svc.fetch("/v1/webhooks", { headers: { "x-api-key": svc.key } })).json()) as {
    data: { count: number };
  };
  expect(list.data.count).toBe(0);
}, 60_000);

test("when the webhook cannot be created, the requests that need its id fail saying so and are never sent to /v1/webhooks/", async () => {
  // Plain http is refused by validation (422) before any address lookup: no traffic leaves loopback.
  const { code, run } = await newman({ api_key: svc.key, webhook_url: "http://127.0.0.1:9/hook" });
  expect(code).not.toBe(0);
  const sent = run.executions.filter((ex) => ex.response).map((ex) => `${ex.request.method} ${pathOf(ex)}`);
  expect(sent.filter((p) => /\/v1\/webhooks\/$/.test(p) || p.includes("{{"))).toEqual([]);
  for (const needsId of [
    "getWebhook",
    "updateWebhook",
    "testWebhook",
    "listWebhookDeliveries",
    "redeliverWebhookDelivery",
    "recoverWebhookDeliveries",
    "deleteWebhook",
  ])
    expect(
      run.failures.map((f) => f.error.test ?? f.error.message),
      needsId,
    ).toContainEqual(`${needsId}: webhook_id is set (Create a webhook must run first and succeed)`);
  // Only the create (refused) and the list and rotate-secret, which need no id, reach /v1/webhooks.
  expect(sent.filter((p) => / \/v1\/webhooks\//.test(p) && !p.endsWith("/rotate-secret"))).toEqual([]);
}, 60_000);
