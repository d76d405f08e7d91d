/**
 * The delivery counters are counted outside prom-client and handed over when a scrape collects
 * (src/modules/metrics/registry.ts): a scrape shows every outcome observed before it, once.
 */
import { expect, test } from "bun:test";
import { observeDelivery, serviceRegistry } from "../../src/modules/metrics/registry.ts";

const NAME = "courier_tracking_webhook_delivery_attempts_total";

async function count(labels: string): Promise<number> {
  const text = await serviceRegistry.getSingleMetricAsString(NAME);
  const line = text.split("\n").find((l) => l.startsWith(`${NAME}{${labels}} `));
  return line ? Number(line.split(" ")[1]) : 0;
}

test("outcomes observed between scrapes are counted once each, by outcome and mode", async () => {
  const before = {
    delivered: await count('outcome="delivered",mode="live"'),
    retried: await count('outcome="retried",mode="test"'),
  };
  const row = { mode: "live", enqueued_at: new Date(Date.now() - 1_000).toISOString() };
  for (let i = 0; i < 3; i++) observeDelivery(row, { state: "delivered" }, { deactivated: false }, Date.now());
  observeDelivery({ ...row, mode: "test" }, { state: "pending" }, { deactivated: false }, Date.now());
  expect(await count('outcome="delivered",mode="live"')).toBe(before.delivered + 3);
  expect(await count('outcome="retried",mode="test"')).toBe(before.retried + 1);
  // A second scrape adds nothing that was not observed since.
  expect(await count('outcome="delivered",mode="live"')).toBe(before.delivered + 3);
  observeDelivery(row, { state: "delivered" }, { deactivated: false }, Date.now());
  expect(await count('outcome="delivered",mode="live"')).toBe(before.delivered + 4);
  const latency = await serviceRegistry.getSingleMetricAsString("courier_tracking_webhook_delivery_latency_seconds");
  expect(latency).toMatch(/courier_tracking_webhook_delivery_latency_seconds_count\{mode="live"\} [1-9]/);
});
