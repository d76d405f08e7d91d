/** Configuration only overrides the policy's numbers: unset, every default is the constant src/domain/ names. */
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/configure.ts";
import { RETRY_SCHEDULE_SECONDS } from "../../src/domain/delivery.ts";
import { RECHECK_INTERVAL_SECONDS } from "../../src/domain/following.ts";
import { ASYNC_LOOKUP_BUDGET_MS } from "../../src/domain/limits.ts";

test("unset variables take the spec's numbers from src/domain/", () => {
  const config = loadConfig({});
  expect(config.webhookRetryScheduleSeconds).toEqual([...RETRY_SCHEDULE_SECONDS]);
  expect(config.recheckIntervalSeconds).toBe(RECHECK_INTERVAL_SECONDS);
  expect(config.courierAsyncBudgetMs).toBe(ASYNC_LOOKUP_BUDGET_MS);
});
