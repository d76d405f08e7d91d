/**
 * Builds the real app on a real per-file database, with a fake clock, and
 * offers `call()` returning `[response, body]`. `app.handle()` goes through the server's composed `fetch`
 * (src/http/server.ts): every test request passes the access log and the key lookup, as in production.
 */
import { buildApp } from "../../src/app.ts";
import type { AppDeps } from "../../src/deps.ts";
import type { Config } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createAccount, createApiKey } from "../../src/modules/accounts/service.ts";
import type { PlanId } from "../../src/domain/plans.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { outboxEventSink } from "../../src/modules/webhooks/delivery/outbox.ts";
import { startSimulator, type Simulator } from "../../src/sandbox/server.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { servicesFor } from "./services.ts";

export interface TestContext {
  tdb: TestDatabase;
  deps: AppDeps;
  app: ReturnType<typeof buildApp>;
  clock: FakeClock;
  config: Config;
  /** The courier simulator, a real HTTP server on loopback. */
  sim: Simulator;
  /** `[response, parsed JSON body or text]` for a request against the app. */
  call(path: string, init?: RequestInit & { key?: string }): Promise<[Response, any]>;
  /** A new account with one API key. */
  account(plan?: PlanId, email?: string): Promise<{ id: string; key: string; email: string }>;
  close(): Promise<void>;
}

export async function testContext(
  env: Record<string, string> = {},
  extra: Partial<AppDeps> = {},
): Promise<TestContext> {
  const tdb = await createTestDatabase();
  const clock = new FakeClock();
  // Short courier budgets keep the timeout scenarios quick; tests override them through `env`.
  const config = loadConfig({
    COURIER_MODE: "sandbox",
    COURIER_TIMEOUT_MS: "1500",
    COURIER_ASYNC_BUDGET_MS: "5000",
    SANDBOX_ASYNC_SECONDS: "1",
    ...env,
  });
  const sim = startSimulator({
    clock,
    stepSeconds: config.sandboxStepSeconds,
    asyncSeconds: config.sandboxAsyncSeconds,
  });
  const services = servicesFor(tdb.db, clock);
  const backends = createCourierBackends({
    config,
    clock,
    log: silentLogger,
    simulator: sim,
    calls: services.courierCalls,
  });
  const deps: AppDeps = {
    config,
    db: tdb.db,
    clock,
    log: silentLogger,
    secretsKey: crypto.getRandomValues(new Uint8Array(32)),
    backends,
    services,
    ...extra,
    onEvents: extra.onEvents ?? outboxEventSink,
  };
  const app = buildApp(deps);
  let n = 0;
  return {
    tdb,
    deps,
    app,
    clock,
    config,
    sim,
    async call(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set("x-api-key", init.key);
      if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
      const res = await app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {}
      return [res, body];
    },
    async account(plan = "free", email) {
      const e = email ?? `user${++n}-${Bun.randomUUIDv7().slice(-8)}@example.com`;
      const acc = await createAccount(tdb.db, { email: e, plan });
      const { key } = await createApiKey(tdb.db, acc.id, "default", { alert: false });
      return { id: acc.id, key, email: e };
    },
    async close() {
      await backends.close();
      await sim.stop();
      await tdb.drop();
    },
  };
}
