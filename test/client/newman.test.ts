/**
 * Issue 8 item 2: the collection served at /postman runs green with newman
 * against the real, running sandbox service, as a customer would run it:
 * `newman run c.json --insecure --env-var api_key=… --env-var webhook_url=…`.
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
});

afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
  receiver?.stop();
});

test("every request of the /postman collection answers its documented success status under newman", async () => {
  const res = await svc.fetch("/postman");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-disposition")).toBe('attachment; filename="courier-tracking-api.postman_collection.json"');
  const collection = await res.json();
  const doc = (await (await svc.fetch("/openapi.json")).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

  const dir = mkdtempSync(join(tmpdir(), "newman-"));
  const file = join(dir, "c.json");
  const report = join(dir, "report.json");
  writeFileSync(file, JSON.stringify(collection));
  const proc = Bun.spawn(
    ["node", join(import.meta.dir, "../../node_modules/newman/bin/newman.js"), "run", file, "--insecure", "--env-var", `api_key=${svc.key}`, "--env-var", `webhook_url=${receiver.url("/newman")}`, "--reporters", "cli,json", "--reporter-json-export", report],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
  if (code !== 0) console.error(out);
  expect(code).toBe(0);

  const run = JSON.parse(readFileSync(report, "utf8")).run as { failures: unknown[]; executions: { item: { name: string }; request: { method: string; url: { path: string[] } }; response: { code: number } }[] };
  expect(run.failures).toEqual([]);
  const operationsInDoc = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  expect(run.executions.length).toBe(operationsInDoc);
  for (const ex of run.executions) {
    // The request's path with the id filled in; map it back to the template to find the documented status.
    const path = `/${ex.request.url.path.join("/")}`;
    const template = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path) && doc.paths[p]![ex.request.method.toLowerCase()]);
    expect(template, `${ex.request.method} ${path}`).toBeDefined();
    const statuses = Object.keys(doc.paths[template!]![ex.request.method.toLowerCase()]!.responses);
    const documented = Number(statuses.find((s) => /^2\d\d$/.test(s)));
    expect(`${ex.item.name}: ${ex.response.code}`).toBe(`${ex.item.name}: ${documented}`);
  }
  // The test fire reached the receiver, signed.
  const hits = receiver.on("/newman");
  expect(hits.length).toBe(1);
  expect(hits[0]!.headers["x-service-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
  expect(hits[0]!.headers["x-webhook-mode"]).toBe("test");
}, 60_000);
