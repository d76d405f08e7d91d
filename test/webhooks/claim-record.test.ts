/**
 * The claim and record statements read back as little as they can: the webhook's columns once per
 * webhook, the shipment once per shipment with its history encoded, the lease not at all, and only the
 * outcomes NOT recorded. These tests hold what the worker still sees: every claimed row carries its own
 * webhook's columns and the whole shipment, and an outcome whose lease was taken over is reported as not
 * recorded (real PostgreSQL, no HTTP).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { deliveries } from "../../src/db/schema/index.ts";
import type { StoredCheckpoint } from "../../src/domain/checkpoint.ts";
import { planHistory } from "../../src/modules/following/history.ts";
import { claimDue, recordOutcomes, type Outcome } from "../../src/modules/webhooks/delivery/outbox.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { webhookEnv } from "./receiver.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  await ctx.close();
});

async function liveWebhook(url: string, events: string[]) {
  const acc = await ctx.account("business");
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url, events, mode: "live" }),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  return { acc, id: body.data.id as string, shp };
}

const delivered: Outcome = {
  state: "delivered",
  attempts: 1,
  nextAttemptAt: null,
  statusCode: 200,
  error: null,
  hops: [],
};

describe("claimDue", () => {
  test("rows of several webhooks in one claim each carry their own webhook's url, mode, status, events, plan and secret", async () => {
    const a = await liveWebhook("https://127.0.0.1:9/a", ["tracking.updated", "tracking.delivered"]);
    const b = await liveWebhook("https://127.0.0.1:9/b", ["tracking.updated"]);
    for (let i = 0; i < 3; i++) {
      await emit(ctx.tdb.db, a.shp, "tracking.updated", new Date(ctx.clock.now()));
      await emit(ctx.tdb.db, b.shp, "tracking.updated", new Date(ctx.clock.now()));
    }
    const claimed = (await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000)).filter(
      (c) => c.webhook_id === a.id || c.webhook_id === b.id,
    );
    expect(claimed).toHaveLength(6);
    const [secretA] = await ctx.tdb.sql`select webhook_secret_enc as s from accounts where id = ${a.acc.id}`;
    const [secretB] = await ctx.tdb.sql`select webhook_secret_enc as s from accounts where id = ${b.acc.id}`;
    for (const c of claimed) {
      const mine = c.webhook_id === a.id ? a : b;
      expect(c).toMatchObject({
        account_id: mine.acc.id,
        url: mine === a ? "https://127.0.0.1:9/a" : "https://127.0.0.1:9/b",
        webhook_mode: "live",
        webhook_status: "active",
        webhook_events: mine === a ? ["tracking.updated", "tracking.delivered"] : ["tracking.updated"],
        plan: "business",
        secret_enc: (mine === a ? secretA : secretB)!.s,
        event_type: "tracking.updated",
        attempts: 0,
      });
      expect(c.shipment?.courier).toBe("delhivery");
    }
    // The lease handed back is the one written.
    const rows = await ctx.tdb
      .sql`select id, lease_until from deliveries where id in ${ctx.tdb.sql(claimed.map((c) => c.id))}`;
    for (const r of rows)
      expect(new Date(r.lease_until as string).getTime()).toBe(new Date(claimed[0]!.lease_until).getTime());
    await recordOutcomes(
      ctx.tdb.sql,
      claimed.map((c) => ({ delivery: c, outcome: delivered })),
      ctx.clock.now(),
    );
  });
});

describe("claimDue: the shipment", () => {
  test("read once for all its deliveries in a claim: every row carries it, its whole history decoded, and its own account's follow data", async () => {
    const a = await liveWebhook("https://127.0.0.1:9/sa", ["tracking.updated"]);
    const b = await liveWebhook("https://127.0.0.1:9/sb", ["tracking.updated"]);
    const shp = await shipment(ctx.tdb.db, [a.acc.id, b.acc.id]);
    // 45 checkpoints as the service lays them out: the newest 5 in the row, 40 in a sealed chunk; one of them
    // without milliseconds (stored as its ten strings).
    const history: StoredCheckpoint[] = Array.from({ length: 45 }, (_, k) => {
      const at = new Date(Date.parse("2026-10-01T00:00:00.000Z") + (44 - k) * 3_600_000 + k).toISOString();
      const local = new Date(Date.parse(at) + 330 * 60_000).toISOString();
      return {
        state: "in_transit",
        subStatus: null,
        activity: `Scan ${k}`,
        location: "Pune_Hub (Maharashtra)",
        localDate: local.slice(0, 10),
        localTime: local.slice(11, 16),
        at: k === 7 ? at.replace(/\.\d{3}Z$/, "Z") : at,
        rawCode: `X-${k}`,
        rawStatus: "In Transit",
        remark: k % 3 === 0 ? `bag ${k}` : null,
      };
    });
    const plan = planHistory({ checkpoints: [], current: false, tailLength: 0, chunks: [] }, history);
    expect(plan.seal).toHaveLength(1);
    const [chunk] = await ctx.tdb.sql`
      insert into shipment_checkpoint_chunks (shipment_id, checkpoints)
      values (${shp}, ${JSON.stringify(plan.seal[0])}::text::jsonb) returning id::text`;
    await ctx.tdb.sql`
      update shipments set history_tail = ${JSON.stringify(plan.tail)}::text::jsonb, history_chunks = ${[chunk!.id]}::bigint[],
        checkpoints = '[]', history_at = updated_at where id = ${shp}`;
    await ctx.tdb
      .sql`update follows set reference = 'order-a', metadata = '{"k":"a"}' where shipment_id = ${shp} and account_id = ${a.acc.id}`;
    const [stored] = await ctx.tdb.sql`select shipment_history(s) as h from shipments s where id = ${shp}`;
    expect(stored!.h).toEqual(history);
    for (let i = 0; i < 2; i++) await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));

    const claimed = (await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000)).filter(
      (c) => c.webhook_id === a.id || c.webhook_id === b.id,
    );
    expect(claimed).toHaveLength(4);
    for (const c of claimed) {
      expect(c.shipment?.checkpoints).toStrictEqual(history);
      expect(c.shipment).toMatchObject(
        c.webhook_id === a.id
          ? { courier: "delhivery", reference: "order-a", metadata: { k: "a" } }
          : { courier: "delhivery", reference: null, metadata: {} },
      );
    }
    await recordOutcomes(
      ctx.tdb.sql,
      claimed.map((c) => ({ delivery: c, outcome: delivered })),
      ctx.clock.now(),
    );
  });
});

describe("recordOutcomes", () => {
  test("an outcome whose lease ran out and was claimed again is not recorded; the others in the batch are", async () => {
    const w = await liveWebhook("https://127.0.0.1:9/c", ["tracking.updated"]);
    await emit(ctx.tdb.db, w.shp, "tracking.updated", new Date(ctx.clock.now()));
    await emit(ctx.tdb.db, w.shp, "tracking.updated", new Date(ctx.clock.now()));
    const first = (await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000)).filter((c) => c.webhook_id === w.id);
    expect(first).toHaveLength(2);
    // The first worker stalls past its lease; another claims one row again (a new lease).
    await ctx.tdb
      .sql`update deliveries set lease_until = ${new Date(ctx.clock.now() - 1).toISOString()} where id = ${first[1]!.id}`;
    ctx.clock.advance(1_000);
    const second = (await claimDue(ctx.tdb.sql, ctx.clock.now(), 100, 60_000)).filter((c) => c.webhook_id === w.id);
    expect(second.map((c) => c.id)).toEqual([first[1]!.id]);

    const late = await recordOutcomes(
      ctx.tdb.sql,
      first.map((c) => ({ delivery: c, outcome: delivered })),
      ctx.clock.now(),
    );
    expect([...late.recorded]).toEqual([first[0]!.id]);
    expect(late.deactivated).toEqual([]);
    const [kept] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.id, first[1]!.id));
    expect(kept).toMatchObject({ state: "pending", attempts: 0 });

    const owner = await recordOutcomes(ctx.tdb.sql, [{ delivery: second[0]!, outcome: delivered }], ctx.clock.now());
    expect([...owner.recorded]).toEqual([second[0]!.id]);
    const [done] = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.id, first[1]!.id));
    expect(done).toMatchObject({ state: "delivered", attempts: 1, leaseUntil: null });
  });
});
