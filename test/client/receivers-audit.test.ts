/**
 * The receiver audit (docs/webhook-receivers.md, "Audit your receiver"): against the TypeScript receiver of the
 * document, served on loopback over real TLS, every case passes; against the same receiver with its timestamp check
 * switched off, the report names `stale_timestamp`. An address the guard refuses is never contacted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps } from "../../src/deps.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { testCert, webhookEnv } from "../webhooks/receiver.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/webhook-receivers.md"), "utf8");
const TS_BLOCK = /```ts\n([\s\S]*?)\n```/.exec(DOC)![1]!;
const STRICT = "export const TOLERANCE_SECONDS = 5 * 60;";

type Secrets = { current: string };
interface Snippet {
  handleWebhook(req: Request, secrets: Secrets): Promise<Response>;
}

/** Names for the test; the blocked one is data only (the guard refuses it before connecting). */
const resolver: Resolver = async (host) => {
  if (host === "intranet.test") return [{ address: "10.0.0.7", family: 4 }];
  throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
};

let ctx: TestContext;
const secrets: Secrets = { current: "" };
const seen: { receiver: string; headers: Headers; status: number }[] = [];
const servers: ReturnType<typeof Bun.serve>[] = [];
const dir = mkdtempSync(join(tmpdir(), "receivers-audit-"));

/** Serves the document's receiver (its source changed by `edit`) on loopback TLS; returns its URL. */
async function serve(name: string, edit: (src: string) => string): Promise<string> {
  writeFileSync(join(dir, `${name}.ts`), edit(TS_BLOCK));
  const snippet = (await import(join(dir, `${name}.ts`))) as Snippet;
  const { cert, key } = await testCert();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      const res = await snippet.handleWebhook(req, secrets);
      seen.push({ receiver: name, headers: req.headers, status: res.status });
      return res;
    },
  });
  servers.push(server);
  return `https://127.0.0.1:${server.port}/hooks`;
}

let strictUrl: string;
let laxUrl: string;
beforeAll(async () => {
  expect(TS_BLOCK).toContain(STRICT);
  strictUrl = await serve("strict", (s) => s);
  laxUrl = await serve("lax", (s) => s.replace(STRICT, "export const TOLERANCE_SECONDS = Infinity;"));
  ctx = await testContext(await webhookEnv(), { resolver } as Partial<AppDeps>);
});
afterAll(async () => {
  for (const s of servers) s.stop(true);
  await ctx?.close();
});

async function webhook(key: string, url: string): Promise<string> {
  const [res, body] = await ctx.call("/v1/webhooks", {
    method: "POST",
    key,
    body: JSON.stringify({ url, events: ["tracking.delivered"], mode: "test" }),
  });
  expect(res.status).toBe(201);
  if (body.data.secret.startsWith("whsec_")) secrets.current = body.data.secret;
  return body.data.id;
}

const audit = (key: string, id: string) => ctx.call(`/v1/webhooks/${id}/audit`, { method: "POST", key });

test("the document's TypeScript receiver passes every case; the four requests are marked test and logged", async () => {
  const a = await ctx.account("growth");
  const id = await webhook(a.key, strictUrl);
  const [res, body] = await audit(a.key, id);
  expect(res.status).toBe(200);
  expect(body.data).toEqual({
    verdict: "ok",
    cases: [
      { case: "valid", status: 200, verdict: "pass", error: null },
      { case: "wrong_signature", status: 401, verdict: "pass", error: null },
      { case: "stale_timestamp", status: 401, verdict: "pass", error: null },
      { case: "no_signature", status: 401, verdict: "pass", error: null },
    ],
    guide: "docs/webhook-receivers.md",
  });
  const got = seen.filter((s) => s.receiver === "strict");
  expect(got).toHaveLength(4);
  for (const s of got)
    expect([s.headers.get("x-webhook-mode"), s.headers.get("x-webhook-audit")]).toEqual(["test", "true"]);
  expect([got[3]!.headers.get("x-service-signature"), got[3]!.headers.get("webhook-signature")]).toEqual([null, null]);
  const ages = got.map((s) => Math.round((Date.now() / 1000 - Number(s.headers.get("webhook-timestamp"))) / 60));
  expect(ages).toEqual([0, 0, 10, 0]);

  const [, log] = await ctx.call(`/v1/webhooks/${id}/deliveries`, { key: a.key });
  expect(log.data.deliveries.map((d: any) => [d.mode, d.state, d.last_status_code])).toEqual([
    ["test", "abandoned", 401],
    ["test", "abandoned", 401],
    ["test", "abandoned", 401],
    ["test", "delivered", 200],
  ]);
});

test("a receiver that skips the timestamp check: verdict failed, naming stale_timestamp", async () => {
  const a = await ctx.account("growth");
  const id = await webhook(a.key, laxUrl);
  const [, body] = await audit(a.key, id);
  expect(body.data.verdict).toBe("failed");
  expect(body.data.cases.filter((c: any) => c.verdict === "fail")).toEqual([
    { case: "stale_timestamp", status: 200, verdict: "fail", error: null },
  ]);
});

test("an address the guard refuses: every case fails with address_blocked and nothing is sent", async () => {
  const a = await ctx.account("growth");
  const id = await webhook(a.key, "https://intranet.test/hooks");
  const before = seen.length;
  const [, body] = await audit(a.key, id);
  expect(body.data.verdict).toBe("failed");
  for (const c of body.data.cases) expect([c.status, c.verdict, c.error]).toEqual([null, "fail", "address_blocked"]);
  expect(seen.length).toBe(before);
});
