/**
 * The sign-in throttle's counters under concurrency (src/modules/accounts/signin-throttle.ts): reservations,
 * refunds and clears of one account from one address, all at once, never deadlock — each statement locks the
 * counter rows in the same order (pair → ip → account).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { clearAfterSuccess, refundAttempt, reserveAttempt } from "../../src/modules/accounts/signin-throttle.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 24 });
});
afterAll(async () => {
  await tdb?.drop();
});

test("10 rounds of 20 concurrent reserve → refund or clear on the same counters finish without a deadlock", async () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const failures: string[] = [];
  let admitted = 0;
  for (let round = 0; round < 10; round++) {
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        try {
          const r = await reserveAttempt(tdb.db, "198.51.100.7", "owner@example.com", now);
          if (!r.ok) return;
          admitted++;
          // Most attempts are given back (the gate was full), some succeed (the right password).
          if (i % 5 === 0) await clearAfterSuccess(tdb.db, r);
          else await refundAttempt(tdb.db, r);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }),
    );
  }
  expect(failures).toEqual([]);
  expect(admitted).toBeGreaterThan(0);
}, 60_000);
