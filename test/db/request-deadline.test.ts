/**
 * The request deadline in the pool (src/lib/deadline.ts, the `deadline` option of our postgres-js patch): a
 * statement never waits past the deadline of the request that sent it, whatever its other bounds. The pools here
 * get per-statement bounds of 60 s (DB_DEADLINE_SECONDS=60), so a statement that ends sooner behind a partition
 * was ended by its deadline; its code (DEADLINE_EXCEEDED) says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import {
  Deadline,
  deadlineLeftMs,
  offTheClock,
  untilDeadline,
  withDeadline,
  withoutDeadline,
} from "../../src/lib/deadline.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startPgRelay, type PgRelay } from "../helpers/pg-relay.ts";

let tdb: TestDatabase;
let relay: PgRelay;
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 2 });
  await tdb.sql`create table deadline_probe (n int)`;
  relay = startPgRelay(tdb.url);
});
afterAll(async () => {
  relay.heal();
  relay.stop();
  await tdb.drop();
});

/** A pool through the relay whose own bounds (answer, queue) are 60 s and 30 s: only a deadline ends a wait sooner. */
function slowBoundedPool(max = 1) {
  return connect(relay.url, { max, deadlines: true, deadlineSeconds: 60 });
}

/** The driver code a rejected promise carries ("ok" when it resolved). A statement runs when awaited: call it inside. */
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: { code?: string; cause?: { code?: string } }) => e.cause?.code ?? e.code ?? String(e),
  );

test("a Deadline: ms left, moved later by time off the clock, none once closed or outside it", async () => {
  let now = 1_000;
  const d = new Deadline(500, () => now);
  now += 200;
  expect(d.leftMs()).toBe(300);
  await d.excluding(async () => {
    now += 5_000;
  });
  expect(d.leftMs()).toBe(300);
  // Two calls off the clock that overlap move it once, by the time from the first start to the last end.
  let release!: () => void;
  const first = d.excluding(() => new Promise<void>((r) => (release = r)));
  now += 100;
  const second = d.excluding(async () => {
    now += 100;
  });
  await second;
  now += 100;
  release();
  await first;
  expect(d.leftMs()).toBe(300);
  now += 400;
  expect(d.leftMs()).toBe(-100);
  d.close();
  expect(d.leftMs()).toBeUndefined();

  const e = new Deadline(1_000, () => now);
  expect(deadlineLeftMs()).toBeUndefined();
  await withDeadline(e, async () => {
    await Bun.sleep(0);
    expect(deadlineLeftMs()).toBe(1_000);
    await offTheClock(async () => {
      now += 700;
    });
    expect(deadlineLeftMs()).toBe(1_000);
    expect(withoutDeadline(() => deadlineLeftMs())).toBeUndefined();
  });
});

test("a statement whose request has no time left is refused at once and never reaches the server", async () => {
  const { sql } = slowBoundedPool();
  try {
    const spent = new Deadline(0);
    expect(await withDeadline(spent, () => codeOf(sql`insert into deadline_probe values (1)`))).toBe(
      "DEADLINE_EXCEEDED",
    );
    expect([...(await sql`select count(*)::int as n from deadline_probe where n = 1`)]).toEqual([{ n: 0 }]);
    // Outside a request, no deadline: the same pool answers.
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test("behind a partition, a statement on an open connection ends at its deadline; the pool answers once healed", async () => {
  const { sql } = slowBoundedPool();
  try {
    await sql`select 1`;
    relay.blackhole();
    try {
      expect(await withDeadline(new Deadline(300), () => codeOf(sql`select 1`))).toBe("DEADLINE_EXCEEDED");
    } finally {
      relay.heal();
    }
    expect([...(await sql`select 2 as two`)]).toEqual([{ two: 2 }]);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test("a transaction cut mid-way ends at its deadline, writes nothing, and its pool answers again once healed", async () => {
  const { db, sql } = slowBoundedPool();
  try {
    await sql`select 1`;
    const tx = withDeadline(new Deadline(1_000), () =>
      codeOf(
        db.transaction(async (t) => {
          await t.execute("insert into deadline_probe values (2)");
          relay.blackhole();
          await t.execute("insert into deadline_probe values (3)");
        }),
      ),
    );
    try {
      // The deadline ends the connection; the driver's rollback then reports it closed (either code answers 503).
      expect(["DEADLINE_EXCEEDED", "CONNECTION_CLOSED"]).toContain(await tx);
    } finally {
      relay.heal();
    }
    // Its connection was ended, so the server rolled the first insert back too.
    expect([...(await tdb.sql`select count(*)::int as n from deadline_probe where n in (2, 3)`)]).toEqual([{ n: 0 }]);
    // The pool's one connection is not left reserved: it reconnects (the first try may meet the closing socket).
    const outcomes: string[] = [];
    for (let i = 0; i < 5 && !outcomes.includes("ok"); i++) outcomes.push(await codeOf(sql`select 1`));
    expect(outcomes).toContain("ok");
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test("on a shared connection, a late statement's caller stops at its deadline; the connection and its other statements go on", async () => {
  const { sql } = slowBoundedPool(1);
  try {
    await sql`select 1`;
    const other = codeOf(sql`select pg_sleep(0.5)`);
    // Pipelined behind the other request's statement on the pool's one connection.
    const late = withDeadline(new Deadline(50), () => codeOf(sql`select 1`));
    expect(await late).toBe("DEADLINE_EXCEEDED");
    expect(await other).toBe("ok");
    expect([...(await sql`select 3 as three`)]).toEqual([{ three: 3 }]);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test("untilDeadline: the caller stops waiting at the deadline, the work goes on; no deadline outside a request", async () => {
  let finish!: (v: string) => void;
  const work = new Promise<string>((r) => (finish = r));
  const waited = withDeadline(new Deadline(20), () => codeOf(untilDeadline(work)));
  expect(await waited).toBe("DEADLINE_EXCEEDED");
  finish("done");
  expect(await work).toBe("done");
  expect(await untilDeadline(Promise.resolve(7))).toBe(7);
});
