/** Housekeeping releases expired leases and prunes only what is past RETENTION_DAYS. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import {
  deliveries,
  deliveryAttempts,
  demoHits,
  events,
  rateWindows,
  recheckSchedule,
  sessions,
  webhooks,
} from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { runHousekeeping } from "../../src/scheduler/housekeeping.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { seedMany } from "./helpers.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ RETENTION_DAYS: "30" });
});
afterAll(() => ctx.close());

const DAY = 86_400_000;

describe("housekeeping", () => {
  test("prunes final outbox rows, attempt logs, unreferenced events, rate windows and demo hits past retention; keeps the rest", async () => {
    const db = ctx.tdb.db;
    const now = ctx.clock.now();
    const old = new Date(now - 30 * DAY - 60_000); // just past retention
    const young = new Date(now - 30 * DAY + 60_000); // just inside it
    const acc = await ctx.account("growth");
    const whId = newId("wh");
    await db.insert(webhooks).values({
      id: whId,
      accountId: acc.id,
      url: "https://hooks.example.com/x",
      events: ["tracking.updated"],
      mode: "live",
    });
    const [shp] = await seedMany(ctx, acc.id, [["delhivery", "1234567890111"]]);

    const ev = async (name: string, createdAt: Date) => {
      const id = newId("evt");
      await db.insert(events).values({
        id,
        shipmentId: shp!,
        type: "tracking.updated",
        status: "in_transit",
        enqueuedAt: createdAt,
        createdAt,
      });
      return [name, id] as const;
    };
    const E = Object.fromEntries(
      await Promise.all([
        ev("oldAlone", old), // no outbox row: goes
        ev("oldPending", old), // a pending delivery still refers to it: stays
        ev("oldRecentDelivered", old), // its delivery is within retention: stays
        ev("oldOldDelivered", old), // its delivery goes, then it goes
        ev("young", young),
      ]),
    );
    const dl = async (name: string, eventId: string, state: string, updatedAt: Date) => {
      const id = newId("dlv");
      await db.insert(deliveries).values({
        id,
        webhookId: whId,
        accountId: acc.id,
        eventId,
        shipmentId: shp!,
        eventType: "tracking.updated",
        mode: "live",
        state,
        attempts: 1,
        nextAttemptAt: state === "pending" ? updatedAt : null,
        enqueuedAt: updatedAt,
        createdAt: updatedAt,
        updatedAt,
      });
      return [name, id] as const;
    };
    const D = Object.fromEntries(
      await Promise.all([
        dl("oldDelivered", E.oldOldDelivered!, "delivered", old),
        dl("oldAbandoned", E.young!, "abandoned", old),
        dl("oldDropped", E.young!, "dropped", old),
        dl("oldPending", E.oldPending!, "pending", old),
        dl("youngDelivered", E.oldRecentDelivered!, "delivered", young),
      ]),
    );
    const at = (name: string, deliveryId: string, startedAt: Date) => ({
      id: newId("att"),
      deliveryId,
      webhookId: whId,
      attempt: 1,
      url: `https://hooks.example.com/${name}`,
      startedAt,
      durationMs: 5,
      statusCode: 200,
    });
    await db
      .insert(deliveryAttempts)
      .values([
        at("old", D.youngDelivered!, old),
        at("young", D.youngDelivered!, young),
        at("cascade", D.oldDelivered!, young),
      ]);
    await db.insert(rateWindows).values([
      { key: "rl:old", windowStart: old, count: 1 },
      { key: "rl:young", windowStart: young, count: 1 },
    ]);
    await db.insert(demoHits).values([
      { ip: "192.0.2.1", at: old },
      { ip: "192.0.2.2", at: young },
    ]);
    // Dashboard sessions: one expired a minute ago, one still valid.
    await db.insert(sessions).values([
      {
        id: newId("ses"),
        tokenHash: "a".repeat(64),
        accountId: acc.id,
        csrfToken: "x",
        expiresAt: new Date(now - 60_000),
      },
      {
        id: newId("ses"),
        tokenHash: "b".repeat(64),
        accountId: acc.id,
        csrfToken: "y",
        expiresAt: new Date(now + 60_000),
      },
    ]);
    // Idempotent responses: one past its 24 h, one an hour old (retention does not apply to them).
    await ctx.tdb.sql`insert into idempotency_keys (account_id, key, request_hash, state, status, created_at) values
      (${acc.id}, 'day-old', 'h', 'done', 201, ${new Date(now - 25 * 3600_000).toISOString()}),
      (${acc.id}, 'hour-old', 'h', 'done', 201, ${new Date(now - 3600_000).toISOString()})`;
    // Leases: one ran out (its process died), one is live.
    const [expired, live] = await seedMany(ctx, acc.id, [
      ["delhivery", "2234567890111"],
      ["delhivery", "3234567890111"],
    ]);
    await ctx.tdb
      .sql`update recheck_schedule set lease_owner = 'dead', lease_until = ${new Date(now - 1000).toISOString()}, due_at = ${new Date(now - 1000).toISOString()} where shipment_id = ${expired!}`;
    await ctx.tdb
      .sql`update recheck_schedule set lease_owner = 'alive', lease_until = ${new Date(now + 60_000).toISOString()}, due_at = ${new Date(now + 60_000).toISOString()} where shipment_id = ${live!}`;

    const r = await runHousekeeping(ctx.deps, { batchSize: 2 }); // tiny batches: the loop must carry on until done
    expect(r).toMatchObject({
      leasesReleased: 1,
      deliveries: 3,
      attempts: 1,
      events: 2,
      rateWindows: 1,
      demoHits: 1,
      sessions: 1,
      idempotencyKeys: 1,
    });
    expect((await ctx.tdb.sql`select key from idempotency_keys`).map((x) => x.key)).toEqual(["hour-old"]);
    expect((await db.select().from(sessions)).map((x) => x.tokenHash)).toEqual(["b".repeat(64)]);

    const ids = async <T extends { id: string }>(rows: Promise<T[]>) => (await rows).map((x) => x.id).sort();
    expect(await ids(db.select({ id: deliveries.id }).from(deliveries))).toEqual(
      [D.oldPending!, D.youngDelivered!].sort(),
    );
    expect(await ids(db.select({ id: events.id }).from(events))).toEqual(
      [E.oldPending!, E.oldRecentDelivered!, E.young!].sort(),
    );
    expect((await db.select().from(deliveryAttempts)).map((a) => a.url)).toEqual(["https://hooks.example.com/young"]);
    expect((await db.select().from(rateWindows)).map((w) => w.key)).toEqual(["rl:young"]);
    expect((await db.select().from(demoHits)).map((h) => h.ip)).toEqual(["192.0.2.2"]);
    const leases = await db
      .select({ id: recheckSchedule.shipmentId, owner: recheckSchedule.leaseOwner, due: recheckSchedule.dueAt })
      .from(recheckSchedule);
    expect(leases.find((s) => s.id === expired)).toMatchObject({ owner: null, due: new Date(now - 1000) });
    expect(leases.find((s) => s.id === live)).toMatchObject({ owner: "alive" });

    // A second run finds nothing more.
    expect(await runHousekeeping(ctx.deps)).toMatchObject({
      leasesReleased: 0,
      deliveries: 0,
      attempts: 0,
      events: 0,
      rateWindows: 0,
      demoHits: 0,
      sessions: 0,
      idempotencyKeys: 0,
    });
  }, 30_000);

  test("a final delivery created before the cutoff but finished after it stays until its last change is past retention", async () => {
    const db = ctx.tdb.db;
    const now = ctx.clock.now();
    const acc = await ctx.account("growth");
    const whId = newId("wh");
    await db.insert(webhooks).values({
      id: whId,
      accountId: acc.id,
      url: "https://hooks.example.com/y",
      events: ["tracking.updated"],
      mode: "live",
    });
    const [shp] = await seedMany(ctx, acc.id, [["delhivery", "4234567890111"]]);
    const created = new Date(now - 31 * DAY);
    const row = async (updatedAt: Date) => {
      const id = newId("dlv");
      await db.insert(deliveries).values({
        id,
        webhookId: whId,
        accountId: acc.id,
        shipmentId: shp!,
        eventType: "tracking.updated",
        mode: "live",
        state: "abandoned",
        attempts: 6,
        nextAttemptAt: null,
        enqueuedAt: created,
        createdAt: created,
        updatedAt,
      });
      return id;
    };
    const finishedLate = await row(new Date(now - 29 * DAY)); // retried for two days: last change within retention
    await row(new Date(now - 30 * DAY - 60_000));
    expect(await runHousekeeping(ctx.deps)).toMatchObject({ deliveries: 1 });
    expect(
      (await db.select({ id: deliveries.id }).from(deliveries).where(eq(deliveries.webhookId, whId))).map((d) => d.id),
    ).toEqual([finishedLate]);
  }, 30_000);
});
