/**
 * The attempt log has no foreign key (src/db/schema/webhooks.ts, deliveryAttempts): its rows go with their
 * outbox row through the `deliveries_drop_attempts` statement trigger (migration 0011), whichever way the
 * outbox row is deleted, and nobody else's attempts go with them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { accounts, deliveries, deliveryAttempts, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { deleteWebhook } from "../../src/modules/webhooks/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

/** A webhook with `n` outbox rows of two attempts each; returns the ids. */
async function seed(accountId: string, n: number): Promise<{ webhookId: string; deliveryIds: string[] }> {
  const db = ctx.tdb.db;
  const webhookId = newId("wh");
  await db.insert(webhooks).values({
    id: webhookId,
    accountId,
    url: "https://hooks.example.com/x",
    events: ["tracking.updated"],
    mode: "test",
  });
  const deliveryIds = Array.from({ length: n }, () => newId("dlv"));
  const at = new Date(ctx.clock.now());
  await db.insert(deliveries).values(
    deliveryIds.map((id) => ({
      id,
      webhookId,
      accountId,
      eventType: "tracking.updated",
      mode: "test",
      state: "delivered",
      attempts: 2,
      enqueuedAt: at,
    })),
  );
  await db.insert(deliveryAttempts).values(
    deliveryIds.flatMap((deliveryId) =>
      [1, 2].map((attempt) => ({
        id: newId("att"),
        deliveryId,
        webhookId,
        attempt,
        url: "https://hooks.example.com/x",
        startedAt: at,
        durationMs: 3,
        statusCode: attempt === 2 ? 200 : 500,
      })),
    ),
  );
  return { webhookId, deliveryIds };
}

const attemptsOf = async (deliveryIds: string[]) =>
  (await ctx.tdb.db.select().from(deliveryAttempts).where(inArray(deliveryAttempts.deliveryId, deliveryIds))).length;

describe("attempt rows follow their outbox row", () => {
  test("the foreign key is gone and the trigger is in place", async () => {
    const fks = await ctx.tdb
      .sql`select conname from pg_constraint where conrelid = 'delivery_attempts'::regclass and contype = 'f'`;
    expect(fks).toHaveLength(0);
    const triggers = await ctx.tdb
      .sql`select tgname from pg_trigger where tgrelid = 'deliveries'::regclass and not tgisinternal order by tgname`;
    expect(triggers.map((t) => t.tgname)).toContain("deliveries_drop_attempts");
  });

  test("deleting outbox rows directly removes exactly their attempts", async () => {
    const acc = await ctx.account("growth");
    const a = await seed(acc.id, 3);
    const b = await seed(acc.id, 2);
    await ctx.tdb.db.delete(deliveries).where(inArray(deliveries.id, a.deliveryIds.slice(0, 2)));
    expect(await attemptsOf(a.deliveryIds.slice(0, 2))).toBe(0);
    expect(await attemptsOf(a.deliveryIds.slice(2))).toBe(2);
    expect(await attemptsOf(b.deliveryIds)).toBe(4);
  });

  test("deleting a webhook (cascade to its outbox) removes its attempts and no other webhook's", async () => {
    const acc = await ctx.account("growth");
    const gone = await seed(acc.id, 4);
    const kept = await seed(acc.id, 1);
    await deleteWebhook(ctx.tdb.db, acc.id, gone.webhookId);
    expect(await attemptsOf(gone.deliveryIds)).toBe(0);
    expect(await attemptsOf(kept.deliveryIds)).toBe(2);
  });

  test("deleting an account (cascade through its webhooks) removes every attempt of its deliveries", async () => {
    const acc = await ctx.account("growth");
    const other = await ctx.account("growth");
    const one = await seed(acc.id, 2);
    const two = await seed(acc.id, 3);
    const theirs = await seed(other.id, 2);
    await ctx.tdb.db.delete(accounts).where(eq(accounts.id, acc.id));
    expect(await attemptsOf([...one.deliveryIds, ...two.deliveryIds])).toBe(0);
    expect(await attemptsOf(theirs.deliveryIds)).toBe(4);
  });
});
