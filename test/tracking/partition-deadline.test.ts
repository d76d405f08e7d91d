/**
 * A `/v1/track` caught by a database partition in or just after its courier call answers 503 at its one request
 * deadline (src/http/access-log.ts), whatever stage it is in. The app's pool reaches the database through a relay
 * (test/helpers/pg-relay.ts) and its own per-statement bounds are 60 s (answer) and 30 s (queue), while the request
 * deadline is 1.125 s (DB_DEADLINE_SECONDS=1): only the deadline can end the wait within the test's time, and the
 * log names it (DEADLINE_EXCEEDED). The quota stays exact: the 503's unit is given back, the 200s alone count.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { createLogger } from "../../src/lib/log.ts";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import type { CourierBackends } from "../../src/modules/couriers/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";
import { startPgRelay, type PgRelay } from "../helpers/pg-relay.ts";
import { servicesFor } from "../helpers/services.ts";
import { Client, csrfOf } from "../dashboard/support.ts";

let ctx: TestContext;
let relay: PgRelay;
let pool: ReturnType<typeof connect>;
let app: ReturnType<typeof buildApp>;
const lines: string[] = [];
/** When the next courier call cuts the database: as it starts, or as it returns. */
let cut: "during" | "after" | undefined;
let cutAt = 0;

beforeAll(async () => {
  ctx = await testContext();
  relay = startPgRelay(ctx.tdb.url);
  pool = connect(relay.url, { max: 4, deadlines: true, deadlineSeconds: 60 });
  const real = ctx.deps.backends;
  const partition = () => {
    relay.blackhole();
    cutAt = performance.now();
    cut = undefined;
  };
  // The real sandbox backends (the simulator on loopback, not behind the relay), cutting the database on cue.
  const backends: CourierBackends = {
    ...real,
    async lookup(courier, awb, purpose) {
      if (cut === "during") partition();
      const found = await real.lookup(courier, awb, purpose);
      if (cut === "after") partition();
      return found;
    },
  };
  app = buildApp({
    ...ctx.deps,
    config: { ...ctx.config, dbDeadlineSeconds: 1 },
    db: pool.db,
    services: servicesFor(pool.db, ctx.clock),
    log: createLogger("warn", {}, (line) => void lines.push(line)),
    backends,
  });
});

afterAll(async () => {
  relay?.heal();
  await pool?.sql.end({ timeout: 1 });
  relay?.stop();
  await ctx?.close();
});

const track = (key: string, awb: string) =>
  app.handle(
    new Request(`http://localhost/v1/track?courier=delhivery&tracking_number=${awb}`, {
      headers: { "x-api-key": key },
    }),
  );

for (const [i, when] of (["during", "after"] as const).entries())
  test(`cut ${when} the courier call: 503 SERVICE_UNAVAILABLE with Retry-After at the request deadline; quota exact`, async () => {
    const account = await ctx.account("growth");
    // Warm: the pool's connections, the key, the quota block; digit 1 is in transit, so nothing is reused.
    expect((await track(account.key, `55500000${i}0011`)).status).toBe(200);

    cut = when;
    try {
      const res = await track(account.key, `55500000${i}0021`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("SERVICE_UNAVAILABLE");
      expect(res.headers.get("retry-after")).toBe("5");
    } finally {
      relay.heal();
    }
    expect(cutAt).toBeGreaterThan(0);
    // Answered at all while the partition held (healed only above; the pool's own bounds are 60 s, beyond the
    // test's timeout): the request deadline ended it, as the log says.
    expect(lines.some((l) => l.includes("database unavailable") && l.includes("DEADLINE_EXCEEDED"))).toBe(true);

    // Healed: 200 again (the ended connection is reopened), and only the two 200s are counted.
    let last: Response | undefined;
    expect(
      await eventually(async () => {
        last = await track(account.key, `55500000${i}0031`);
        return last.status === 200;
      }, 10_000),
    ).toBe(true);
    expect(((await last!.json()) as { usage: { used: number } }).usage.used).toBe(2);
    await servicesFor(pool.db).quotaLeases.returnAll();
    expect(await eventually(async () => (await usedThisMonth(ctx.tdb.db, account.id, ctx.clock.now())) === 2)).toBe(
      true,
    );
  });

test("the dashboard caught by a partition answers its 503 page with Retry-After at the request deadline, not a 500", async () => {
  const browser = new Client(app);
  const [page, html] = await browser.get("/dashboard/sign-in");
  expect(page.status).toBe(200);
  relay.blackhole();
  try {
    const [res, body] = await browser.post("/dashboard/sign-in", {
      _csrf: csrfOf(html),
      email: "someone@example.com",
      password: "correct horse battery",
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(body).toContain("Temporarily unavailable");
  } finally {
    relay.heal();
  }
});
