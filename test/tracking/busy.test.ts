/**
 * A courier lane that is full answers at once, over the real HTTPS server of
 * a real service process: excess asynchronous lookups (sandbox digit 9) get
 * 503 COURIER_BUSY with Retry-After, the others 200, and no client's
 * connection is reset.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { request } from "node:https";
import { startService, type RunningService } from "../client/service.ts";

let svc: RunningService;
beforeAll(async () => {
  svc = await startService({
    COURIER_CONCURRENCY: "1",
    COURIER_QUEUE_LIMIT: "1",
    SANDBOX_ASYNC_SECONDS: "1",
    COURIER_ASYNC_BUDGET_MS: "6000",
  });
});
afterAll(() => svc?.stop());

/** One lookup on its own connection: the status and Retry-After, or "reset" when the connection closed unanswered. */
function lookup(n: number): Promise<{ status: number | "reset"; retryAfter?: string; code?: string }> {
  const url = new URL(
    `${svc.baseUrl}/v1/track?courier=delhivery&tracking_number=55500000${String(n).padStart(4, "0")}9`,
  );
  return new Promise((resolve) => {
    const req = request(url, { agent: false, rejectUnauthorized: false, headers: { "x-api-key": svc.key } }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          retryAfter: res.headers["retry-after"] as string | undefined,
          code: body.includes('"code"') ? JSON.parse(body).error.code : undefined,
        }),
      );
      res.on("error", () => resolve({ status: "reset" }));
    });
    req.on("error", () => resolve({ status: "reset" }));
    req.end();
  });
}

test("concurrency 1, queue 1: of 5 concurrent asynchronous lookups 2 are answered 200, 3 get 503 COURIER_BUSY with Retry-After at once, none is reset", async () => {
  const outcomes = await Promise.all(Array.from({ length: 5 }, (_, i) => lookup(i)));
  const busy = outcomes.filter((o) => o.status === 503);
  expect(outcomes.filter((o) => o.status === "reset")).toEqual([]);
  expect(outcomes.filter((o) => o.status === 200)).toHaveLength(2);
  expect(busy).toHaveLength(3);
  for (const b of busy) {
    expect(b.code).toBe("COURIER_BUSY");
    expect(Number(b.retryAfter)).toBeGreaterThanOrEqual(1);
  }
  // The refused lookups did not consume quota: the next lookup is counted from the two that succeeded.
  const [res] = await Promise.all([
    svc.fetch(`/v1/track?courier=delhivery&tracking_number=555000009990`, { headers: { "x-api-key": svc.key } }),
  ]);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { usage: { used: number } }).usage.used).toBe(3);
}, 60_000);
