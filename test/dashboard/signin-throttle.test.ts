/**
 * The sign-in throttle under concurrency (docs/dashboard.md, "Sign-in
 * throttling"): attempts are reserved before the password is checked, the
 * per-address lock-out does not lock the owner out elsewhere, the account is
 * only slowed, and argon2 work stays under the gate's caps. Verifications
 * are counted by wrapping the real `Bun.password.verify`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { corePlugin } from "../../src/http/core.ts";
import { createAccount } from "../../src/modules/accounts/service.ts";
import { dashboardModule } from "../../src/modules/dashboard/index.ts";
import type { PasswordWork } from "../../src/modules/dashboard/service.ts";
import {
  SIGNIN_MAX_FAILURES,
  SIGNIN_SLOW_AFTER,
  SIGNIN_SLOW_INTERVAL_MS,
} from "../../src/modules/accounts/signin-throttle.ts";
import { DEFAULT_VERIFY_GATE, VerifyGate, type VerifyGateOptions } from "../../src/modules/dashboard/verify-gate.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ TRUST_PROXY: "1" });
});
afterAll(() => ctx.close());

const PASSWORD = "correct horse battery";
const CSRF = "t".repeat(43);
let n = 0;
const email = () => `thr${++n}-${Bun.randomUUIDv7().slice(-6)}@example.com`;

/** A dashboard with its own gate whose verifier counts calls and concurrency around the real argon2id check. */
function countingApp(gate: Partial<VerifyGateOptions> = {}) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const work: PasswordWork = {
    gate: new VerifyGate({ ...DEFAULT_VERIFY_GATE, ...gate }),
    async verify(password, hash) {
      stats.calls++;
      stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
      try {
        return await Bun.password.verify(password, hash);
      } finally {
        stats.inFlight--;
      }
    },
  };
  const app = new Elysia()
    .use(corePlugin({ log: ctx.deps.log, trustProxy: ctx.config.trustProxy }))
    .use(dashboardModule(ctx.deps, { work }));
  /** POSTs the sign-in form from client address `ip`; returns the status and the page. */
  const signIn = async (ip: string, who: string, password: string): Promise<[number, string, Response]> => {
    const res = await app.handle(
      new Request("http://localhost/dashboard/sign-in", {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: `ct_csrf=${CSRF}`,
          "x-forwarded-proto": "https",
          "x-forwarded-for": ip,
        },
        body: new URLSearchParams({ _csrf: CSRF, email: who, password }).toString(),
      }),
    );
    return [res.status, await res.text(), res];
  };
  return { stats, signIn, work };
}

const owner = async () => {
  const e = email();
  await createAccount(ctx.tdb.db, { email: e, password: PASSWORD });
  return e;
};

describe("reservation before verification", () => {
  test(`40 concurrent wrong passwords from one address: exactly ${SIGNIN_MAX_FAILURES} argon2 verifications, the rest 429; the owner elsewhere still signs in`, async () => {
    // A gate wide enough never to refuse: only the database reservation limits here.
    const { stats, signIn } = countingApp({ global: 64, perAccount: 64, maxWaiting: 64 });
    const e = await owner();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn("203.0.113.10", e, `wrong password ${i}`)),
    );
    const statuses = answers.map(([s]) => s);
    expect(stats.calls).toBe(SIGNIN_MAX_FAILURES);
    expect(statuses.filter((s) => s === 401)).toHaveLength(SIGNIN_MAX_FAILURES);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - SIGNIN_MAX_FAILURES);
    const throttled = answers.find(([s]) => s === 429)!;
    expect(throttled[1]).toContain("Too many attempts");
    expect(Number(throttled[2].headers.get("retry-after"))).toBeGreaterThan(0);

    // That address stays locked for this account, even with the right password…
    expect((await signIn("203.0.113.10", e, PASSWORD))[0]).toBe(429);
    // …but the owner at another address signs in.
    const [status, , res] = await signIn("198.51.100.20", e, PASSWORD);
    expect(status).toBe(303);
    expect(res.headers.getSetCookie().join()).toContain("ct_session=");
  }, 60_000);

  test("the default gate: 40 concurrent wrong passwords cause at most 10 verifications and at most 2 at a time", async () => {
    const { stats, signIn } = countingApp();
    const e = await owner();
    const statuses = (
      await Promise.all(Array.from({ length: 40 }, (_, i) => signIn("203.0.113.11", e, `wrong password ${i}`)))
    ).map(([s]) => s);
    expect(stats.calls).toBeLessThanOrEqual(SIGNIN_MAX_FAILURES);
    expect(stats.calls).toBeGreaterThan(0);
    expect(stats.maxInFlight).toBeLessThanOrEqual(DEFAULT_VERIFY_GATE.perAccount);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 401)).toHaveLength(stats.calls);
  }, 60_000);

  test("a successful sign-in clears that address's failures on the account", async () => {
    const { signIn } = countingApp();
    const e = await owner();
    for (let i = 0; i < SIGNIN_MAX_FAILURES - 1; i++)
      expect((await signIn("203.0.113.12", e, `typo ${i} in it`))[0]).toBe(401);
    expect((await signIn("203.0.113.12", e, PASSWORD))[0]).toBe(303);
    // A fresh allowance: another full run of failures is answered 401, not 429.
    for (let i = 0; i < SIGNIN_MAX_FAILURES; i++)
      expect((await signIn("203.0.113.12", e, `typo ${i} again`))[0]).toBe(401);
    expect((await signIn("203.0.113.12", e, PASSWORD))[0]).toBe(429);
  }, 60_000);
});

describe("account-wide ceiling", () => {
  test(`past ${SIGNIN_SLOW_AFTER} attempts from many addresses the account is slowed, never locked: the owner gets in after a short wait`, async () => {
    // Room for each round of 10 at once: nobody waits on the gate, so machine speed cannot matter.
    const { signIn } = countingApp({ global: SIGNIN_MAX_FAILURES, perAccount: SIGNIN_MAX_FAILURES, maxWaiting: 64 });
    const e = await owner();
    // Failures spread over addresses, each below its own limit (a distributed guessing run).
    const perIp = SIGNIN_MAX_FAILURES;
    for (let a = 0; a < SIGNIN_SLOW_AFTER / perIp; a++) {
      const statuses = await Promise.all(
        Array.from({ length: perIp }, (_, i) => signIn(`192.0.2.${a + 1}`, e, `guess ${a}-${i}`)),
      );
      expect(statuses.map(([s]) => s)).toEqual(Array(perIp).fill(401));
    }
    // Over the ceiling: one attempt per interval for the account (the service clock does not move here).
    expect((await signIn("192.0.2.100", e, "one more guess"))[0]).toBe(401);
    const [slowed, html, res] = await signIn("198.51.100.30", e, PASSWORD);
    expect(slowed).toBe(429);
    expect(html).toContain("Wait a few seconds");
    expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(SIGNIN_SLOW_INTERVAL_MS / 1000);
    ctx.clock.advance(SIGNIN_SLOW_INTERVAL_MS);
    expect((await signIn("198.51.100.30", e, PASSWORD))[0]).toBe(303);
  }, 90_000);
});

describe("global cap on argon2 work", () => {
  test(`200 sign-ins, 64 in flight at a time: never more than ${DEFAULT_VERIFY_GATE.global} verifications at once; every answer 401 or 429`, async () => {
    const { stats, signIn } = countingApp();
    const statuses: number[] = [];
    let next = 0;
    // 64 workers, each sending its share: 64 requests in flight until the 200 are done.
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < 200; i = next++)
          statuses.push(
            (await signIn(`198.18.${i >> 8}.${i & 255}`, `nobody${i}-${n}@example.com`, "not the password"))[0],
          );
      }),
    );
    expect(statuses).toHaveLength(200);
    expect(stats.maxInFlight).toBeLessThanOrEqual(DEFAULT_VERIFY_GATE.global);
    expect(stats.calls).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 401)).toHaveLength(stats.calls);
  }, 120_000);
});

describe("VerifyGate", () => {
  test("admits up to the caps, queues a bounded number of waiters, and turns the rest away", async () => {
    const gate = new VerifyGate({ global: 2, perAccount: 1, maxWaiting: 2, maxWaitMs: 60_000 });
    const a1 = await gate.acquire("a");
    expect(a1).toBeDefined();
    const b1 = await gate.acquire("b");
    expect(b1).toBeDefined();
    expect(gate.inFlight).toBe(2);
    const aWait = gate.acquire("a"); // queued (global full)
    expect(await gate.acquire("a")).toBeUndefined(); // one waiter per account already
    const cWait = gate.acquire("c"); // queued
    expect(await gate.acquire("d")).toBeUndefined(); // queue full
    b1!();
    // b's slot goes to the oldest waiter that fits: "a" still runs once, so "c" gets it.
    const c = await cWait;
    expect(c).toBeDefined();
    a1!();
    const a2 = await aWait;
    expect(a2).toBeDefined();
    expect(gate.inFlight).toBe(2);
    a2!();
    a2!(); // releasing twice changes nothing
    c!();
    expect(gate.inFlight).toBe(0);
  });

  test("a waiter gives up after maxWaitMs", async () => {
    const gate = new VerifyGate({ global: 1, perAccount: 1, maxWaiting: 4, maxWaitMs: 20 });
    const held = await gate.acquire("a");
    expect(await gate.acquire("b")).toBeUndefined();
    held!();
    expect(await gate.acquire("b")).toBeDefined();
  });
});
