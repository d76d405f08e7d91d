/**
 * `Idempotency-Key` on POST /v1/… (Stripe semantics) against the real app:
 * one webhook for any number of retries, the stored response replayed with
 * Idempotent-Replayed, 422 on a different request, 409 while the first runs,
 * rotate-secret replay per account, and pruning after 24 h.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { idempotencyKeys, webhooks } from "../../src/db/schema/index.ts";
import { executed, IDEMPOTENCY_TTL_MS, prune } from "../../src/http/idempotency.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let ctx: TestContext;
let rx: Receiver;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await ctx.close();
});

const post = (path: string, key: string, idem: string | undefined, body?: unknown) =>
  ctx.call(path, {
    method: "POST",
    key,
    headers: idem === undefined ? {} : { "idempotency-key": idem },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const hook = (path = "/i") => ({ url: rx.url(path), events: ["tracking.delivered"], mode: "test" });

describe("Idempotency-Key", () => {
  test("a retried POST /v1/webhooks creates one webhook and replays the first response with Idempotent-Replayed: true", async () => {
    const a = await ctx.account("growth");
    const [r1, b1] = await post("/v1/webhooks", a.key, "create-1", hook());
    expect(r1.status).toBe(201);
    expect(r1.headers.get("idempotent-replayed")).toBeNull();
    const [r2, b2] = await post("/v1/webhooks", a.key, "create-1", hook());
    expect(r2.status).toBe(201);
    expect(r2.headers.get("idempotent-replayed")).toBe("true");
    expect(r2.headers.get("x-request-id")).toMatch(/^req_/);
    expect(r2.headers.get("ratelimit-limit")).toBe("600");
    expect(b2).toEqual(b1);
    expect(b1.data.secret).toMatch(/^whsec_/);
    const rows = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.accountId, a.id));
    expect(rows.length).toBe(1);
    // Without a key, every POST runs.
    await post("/v1/webhooks", a.key, undefined, hook());
    expect((await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.accountId, a.id))).length).toBe(2);
  });

  test("the same key with a different body or path → 422 detail, type idempotency_key_reused; keys are per account", async () => {
    const a = await ctx.account("growth");
    await post("/v1/webhooks", a.key, "k", hook("/a"));
    const reused = (b: any) => [b.detail.length, b.detail[0].loc, b.detail[0].type];
    const [r1, b1] = await post("/v1/webhooks", a.key, "k", hook("/b"));
    expect([r1.status, ...reused(b1)]).toEqual([422, 1, ["header", "Idempotency-Key"], "idempotency_key_reused"]);
    const [r2, b2] = await post("/v1/webhooks/rotate-secret", a.key, "k");
    expect([r2.status, ...reused(b2)]).toEqual([422, 1, ["header", "Idempotency-Key"], "idempotency_key_reused"]);
    const b = await ctx.account("growth");
    const [r3, b3] = await post("/v1/webhooks", b.key, "k", hook("/b"));
    expect([r3.status, r3.headers.get("idempotent-replayed")]).toEqual([201, null]);
    expect(b3.data.url).toBe(rx.url("/b"));
  });

  test("rotate-secret under a replayed key returns the same secret to the same account only; the stored body is encrypted", async () => {
    const a = await ctx.account("growth");
    const b = await ctx.account("growth");
    const [, s1] = await post("/v1/webhooks/rotate-secret", a.key, "rot");
    const [r2, s2] = await post("/v1/webhooks/rotate-secret", a.key, "rot");
    expect(r2.headers.get("idempotent-replayed")).toBe("true");
    expect(s2.data.secret).toBe(s1.data.secret);
    const [rb, sb] = await post("/v1/webhooks/rotate-secret", b.key, "rot");
    expect(rb.headers.get("idempotent-replayed")).toBeNull();
    expect(sb.data.secret).not.toBe(s1.data.secret);
    const [row] = await ctx.tdb.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.accountId, a.id));
    expect(row!.bodyEnc).not.toContain(s1.data.secret.slice(6, 20));
    expect(row!.bodyEnc).toStartWith("v1.");
  });

  test("a retry while the first request still runs → 409 IDEMPOTENCY_IN_PROGRESS; afterwards the stored result", async () => {
    const a = await ctx.account("growth");
    const [, created] = await post("/v1/webhooks", a.key, undefined, hook("/slow"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    rx.route("/slow", async () => {
      await gate;
      return new Response("ok");
    });
    const first = post(`/v1/webhooks/${created.data.id}/test`, a.key, "fire", {});
    await rx.waitFor("/slow", 1);
    const [r2, b2] = await post(`/v1/webhooks/${created.data.id}/test`, a.key, "fire", {});
    expect([r2.status, b2.error.code, r2.headers.get("retry-after")]).toEqual([409, "IDEMPOTENCY_IN_PROGRESS", "1"]);
    release();
    const [r1, b1] = await first;
    expect(r1.status).toBe(200);
    const [r3, b3] = await post(`/v1/webhooks/${created.data.id}/test`, a.key, "fire", {});
    expect([r3.status, r3.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(b3).toEqual(b1);
    expect(rx.on("/slow").length).toBe(1);
  });

  test("errors the operation raised are stored and replayed; validation before it ran is not; a malformed key is 422", async () => {
    const a = await ctx.account("free");
    const live = { ...hook(), mode: "live" };
    const [r1, b1] = await post("/v1/webhooks", a.key, "e", live);
    expect([r1.status, b1.error.code]).toEqual([403, "PLAN_UPGRADE_REQUIRED"]);
    const [r2, b2] = await post("/v1/webhooks", a.key, "e", live);
    expect([r2.status, r2.headers.get("idempotent-replayed"), b2]).toEqual([403, "true", b1]);
    const [r3] = await post("/v1/webhooks", a.key, "v", { url: "nope" });
    expect(r3.status).toBe(422);
    const [r4] = await post("/v1/webhooks", a.key, "v", hook());
    expect(r4.status).toBe(201);
    const [r5, b5] = await post("/v1/webhooks", a.key, "x".repeat(256), hook());
    expect([r5.status, b5.detail]).toEqual([
      422,
      [
        {
          loc: ["header", "Idempotency-Key"],
          msg: "String should have at most 255 characters",
          type: "string_too_long",
        },
      ],
    ]);
    // A malformed key and a bad body: both problems in one answer, before anything ran.
    const [r6, b6] = await post("/v1/webhooks", a.key, "a key", { url: "https://hooks.example.invalid/" });
    expect([r6.status, b6.detail.map((i: any) => [i.loc.join("."), i.type])]).toEqual([
      422,
      [
        ["header.Idempotency-Key", "string_pattern_mismatch"],
        ["body.events", "missing"],
        ["body.mode", "missing"],
      ],
    ]);
  });

  test("a 429 is never stored: the 11th audit in an hour answers 429 with Retry-After, and once the hour has passed the same key runs the audit", async () => {
    const a = await ctx.account("growth");
    const [, created] = await post("/v1/webhooks", a.key, undefined, hook("/audit-limit"));
    const audit = (idem?: string) => post(`/v1/webhooks/${created.data.id}/audit`, a.key, idem);
    for (let i = 0; i < 10; i++) expect((await audit())[0].status).toBe(200);
    const sent = rx.on("/audit-limit").length;
    const [r1, b1] = await audit("audit-later");
    expect([r1.status, b1.error.code]).toEqual([429, "RATE_LIMITED"]);
    const wait = Number(r1.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    // Retried too early with the same key: refused again, afresh (Retry-After included), not a replay.
    const [r2] = await audit("audit-later");
    expect([r2.status, r2.headers.get("idempotent-replayed"), Number(r2.headers.get("retry-after")) > 0]).toEqual([
      429,
      null,
      true,
    ]);
    ctx.clock.advance(wait * 1000);
    const [r3, b3] = await audit("audit-later");
    expect([r3.status, r3.headers.get("idempotent-replayed"), b3.data.cases.length]).toEqual([200, null, 4]);
    expect(rx.on("/audit-limit").length).toBe(sent + 4);
    // That execution is what the key now holds.
    const [r4, b4] = await audit("audit-later");
    expect([r4.status, r4.headers.get("idempotent-replayed"), b4]).toEqual([200, "true", b3]);
    expect(rx.on("/audit-limit").length).toBe(sent + 4);
    // The same rule for every refusal: stored only what ran (docs/idempotency.md).
    expect([401, 402, 408, 429, 500, 503, 504].filter(executed)).toEqual([]);
    expect([400, 403, 404, 409].filter(executed)).toEqual([400, 403, 404, 409]);
  });

  test("a request check the operation makes (422, nothing ran) is not stored: the same key and body run again later", async () => {
    const a = await ctx.account("growth");
    const [, created] = await post("/v1/webhooks", a.key, undefined, hook("/rec"));
    // A client clock a minute ahead: `since` lies in the future, so it is refused until the minute has passed.
    const body = { since: new Date(ctx.clock.now() + 60_000).toISOString() };
    const [r1, b1] = await post(`/v1/webhooks/${created.data.id}/recover`, a.key, "rec", body);
    expect([r1.status, b1.detail[0].loc]).toEqual([422, ["body", "since"]]);
    ctx.clock.advance(120_000);
    const [r2, b2] = await post(`/v1/webhooks/${created.data.id}/recover`, a.key, "rec", body);
    expect([r2.status, r2.headers.get("idempotent-replayed"), b2.data]).toEqual([202, null, { queued: 0 }]);
  });

  test("after 24 h the key is free again and prune() deletes stored responses older than the cutoff", async () => {
    const a = await ctx.account("growth");
    await post("/v1/webhooks", a.key, "day", hook("/d1"));
    ctx.clock.advance(IDEMPOTENCY_TTL_MS + 1000);
    const [r, b] = await post("/v1/webhooks", a.key, "day", hook("/d2"));
    expect([r.status, r.headers.get("idempotent-replayed"), b.data.url]).toEqual([201, null, rx.url("/d2")]);
    const before = (await ctx.tdb.db.select().from(idempotencyKeys)).length;
    const deleted = await prune(ctx.tdb.db, ctx.clock.now() - IDEMPOTENCY_TTL_MS);
    expect(deleted).toBe(before - 1);
    expect((await ctx.tdb.db.select().from(idempotencyKeys)).map((k) => k.key)).toEqual(["day"]);
  });
});
