/**
 * Receivers: the receiver snippets of docs/webhook-receivers.md work.
 * The TypeScript block is extracted from the document, written to a file and
 * imported as is; it then serves a real HTTPS receiver on loopback that gets
 * real signed deliveries from the service (test fires through the real
 * sender). The Python, Go and PHP programs of the document run in
 * receivers-polyglot.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testContext, type TestContext } from "../helpers/app.ts";
import { testCert, webhookEnv } from "../webhooks/receiver.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/webhook-receivers.md"), "utf8");
const block = (lang: string) => {
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)\\n```").exec(DOC);
  if (!m) throw new Error(`no ${lang} block in docs/webhook-receivers.md`);
  return m[1]!;
};

interface Snippet {
  handleWebhook(
    req: Request,
    secrets: { current: string; previous?: string; previousUntil?: number },
  ): Promise<Response>;
  verifySignature(
    raw: Uint8Array,
    header: string | null,
    secrets: { current: string; previous?: string; previousUntil?: number },
    now?: number,
  ): boolean;
  processed: Map<string, unknown>;
}

let ctx: TestContext;
let snippet: Snippet;
let server: ReturnType<typeof Bun.serve>;
let secrets: { current: string; previous?: string; previousUntil?: number } = { current: "" };
const deliveries: { raw: Uint8Array; headers: Headers; answer: number }[] = [];
const dir = mkdtempSync(join(tmpdir(), "receivers-"));

beforeAll(async () => {
  writeFileSync(join(dir, "receiver.ts"), block("ts"));
  snippet = (await import(join(dir, "receiver.ts"))) as Snippet;
  const { cert, key } = await testCert();
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      const raw = new Uint8Array(await req.clone().arrayBuffer());
      const res = await snippet.handleWebhook(req, secrets);
      deliveries.push({ raw, headers: req.headers, answer: res.status });
      return res;
    },
  });
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  server?.stop(true);
  await ctx?.close();
});

test("the TypeScript receiver verifies real deliveries, refuses a wrong secret, accepts the previous secret for 15 minutes after a rotation, and deduplicates", async () => {
  const a = await ctx.account("growth");
  const post = (path: string, body?: unknown) =>
    ctx.call(path, { method: "POST", key: a.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const [, created] = await post("/v1/webhooks", {
    url: `https://127.0.0.1:${server.port}/hooks`,
    events: ["tracking.delivered"],
    mode: "test",
  });
  const first = created.data.secret as string;
  expect(first).toMatch(/^whsec_/);
  const id = created.data.id as string;

  secrets = { current: first };
  const [, ok] = await post(`/v1/webhooks/${id}/test`);
  expect(ok.data).toMatchObject({ delivered: true, status_code: 200 });
  expect(snippet.processed.size).toBe(1);

  secrets = { current: "whsec_not_the_secret" };
  const [, bad] = await post(`/v1/webhooks/${id}/test`);
  expect(bad.data).toMatchObject({ delivered: false, status_code: 401 });

  // Rotation: deliveries are signed with the new secret at once.
  const [, rotated] = await post("/v1/webhooks/rotate-secret");
  const second = rotated.data.secret as string;
  secrets = { current: first };
  expect((await post(`/v1/webhooks/${id}/test`))[1].data.status_code).toBe(401);
  secrets = { current: second, previous: first, previousUntil: Date.now() + 15 * 60_000 };
  expect((await post(`/v1/webhooks/${id}/test`))[1].data.delivered).toBe(true);

  // A body signed with the previous secret (as sent just before the rotation) passes within 15 minutes, not after.
  const signedWithFirst = deliveries.find((d) => d.answer === 200)!;
  const header = signedWithFirst.headers.get("x-service-signature");
  expect(snippet.verifySignature(signedWithFirst.raw, header, secrets)).toBe(true);
  expect(snippet.verifySignature(signedWithFirst.raw, header, secrets, Date.now() + 16 * 60_000)).toBe(false);
  // One flipped byte of the raw body fails.
  const tampered = signedWithFirst.raw.slice();
  tampered[tampered.length - 2] = tampered.at(-2)! ^ 1;
  expect(snippet.verifySignature(tampered, header, secrets)).toBe(false);

  // Redelivery of the same event (same tuple) is recognised as a duplicate and still answered 2xx.
  secrets = { current: first };
  const replay = await snippet.handleWebhook(
    new Request("https://x/hooks", {
      method: "POST",
      body: new Blob([signedWithFirst.raw.slice()]),
      headers: signedWithFirst.headers,
    }),
    secrets,
  );
  expect([replay.status, await replay.text()]).toEqual([200, "duplicate"]);
});
