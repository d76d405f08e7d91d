/**
 * `bun run bench:signin` — dashboard sign-in bursts against the real app on a
 * loopback socket (docs/dashboard.md, "Sign-in throttling").
 *
 * 1. 40 concurrent wrong passwords for one account from one address.
 * 2. 200 sign-ins for 200 emails from 200 addresses (X-Forwarded-For under
 *    TRUST_PROXY; the addresses are only labels, nothing is sent to them),
 *    64 in flight at a time: with the default verification gate, and with
 *    the gate opened wide (what the reservation alone gives).
 *
 * Prints argon2 verifications (the real `Bun.password.verify`, counted),
 * the most running at once, the answers, wall time and peak RSS growth
 * (sampled every 5 ms). Nothing leaves the machine.
 */
import { Elysia } from "elysia";
import { corePlugin } from "../src/http/core.ts";
import { createAccount } from "../src/modules/accounts/service.ts";
import { dashboardModule } from "../src/modules/dashboard/index.ts";
import type { PasswordWork } from "../src/modules/dashboard/service.ts";
import { DEFAULT_VERIFY_GATE, VerifyGate, type VerifyGateOptions } from "../src/modules/dashboard/verify-gate.ts";
import { testContext } from "../test/helpers/app.ts";

const ctx = await testContext({ TRUST_PROXY: "1" });
const CSRF = "b".repeat(43);

function serve(gate: VerifyGateOptions) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const work: PasswordWork = {
    gate: new VerifyGate(gate),
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
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => app.fetch(r) });
  const signIn = async (ip: string, email: string, password: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}/dashboard/sign-in`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: `ct_csrf=${CSRF}`,
        "x-forwarded-proto": "https",
        "x-forwarded-for": ip,
      },
      body: new URLSearchParams({ _csrf: CSRF, email, password }).toString(),
    });
    await res.arrayBuffer();
    return res.status;
  };
  return { stats, signIn, stop: () => server.stop(true) };
}

/** Runs `jobs` with `inFlight` at a time; reports statuses, time and peak RSS growth. */
async function burst(
  label: string,
  gate: VerifyGateOptions,
  jobs: number,
  inFlight: number,
  job: (s: ReturnType<typeof serve>, i: number) => Promise<number>,
) {
  Bun.gc(true);
  const s = serve(gate);
  const rss0 = process.memoryUsage.rss();
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const started = performance.now();
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < jobs; i = next++) {
        const st = await job(s, i);
        statuses[st] = (statuses[st] ?? 0) + 1;
      }
    }),
  );
  const ms = performance.now() - started;
  clearInterval(sampler);
  s.stop();
  console.log(
    `${label}\n  verifications ${s.stats.calls}, at most ${s.stats.maxInFlight} at once; answers ${JSON.stringify(statuses)}; ${ms.toFixed(0)} ms; peak RSS +${((peak - rss0) / 2 ** 20).toFixed(0)} MiB`,
  );
}

const email = `bench-signin-${Date.now()}@example.com`;
await createAccount(ctx.tdb.db, { email, password: "correct horse battery" });
const wide: VerifyGateOptions = { global: 1000, perAccount: 1000, maxWaiting: 1000, maxWaitMs: 60_000 };

await burst(
  "1. 40 concurrent wrong passwords, one account, one address (default gate)",
  DEFAULT_VERIFY_GATE,
  40,
  40,
  (s, i) => s.signIn("203.0.113.1", email, `wrong ${i}`),
);
const run = Date.now();
await burst(
  "2a. 200 sign-ins, 200 emails and addresses, 64 in flight (default gate: 4 at once, 2 per account)",
  DEFAULT_VERIFY_GATE,
  200,
  64,
  (s, i) => s.signIn(`198.18.${i >> 8}.${i & 255}`, `a${i}-${run}@example.com`, "not the password"),
);
await burst("2b. the same with the gate opened wide (reservation only)", wide, 200, 64, (s, i) =>
  s.signIn(`198.19.${i >> 8}.${i & 255}`, `b${i}-${run}@example.com`, "not the password"),
);

await ctx.close();
