/**
 * The lookup SLO's measure (docs/operations/slo.md): every `GET /v1/track` that reaches its handler observes
 * `courier_tracking_track_own_duration_seconds` once, its result telling whose fault a failure was.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

const NAME = "courier_tracking_track_own_duration_seconds";
let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(async () => {
  await ctx.close();
});

async function counts(): Promise<Record<string, number>> {
  const text = await serviceRegistry.getSingleMetricAsString(NAME);
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${NAME}_count\\{result="(\\w+)"\\} (\\S+)$`, "gm")))
    out[m[1]!] = Number(m[2]);
  return out;
}

test("one observation per lookup: ok, the client's 4xx, the courier's 502, and none for a request refused at the key", async () => {
  const acc = await ctx.account("growth");
  const before = await counts();
  const track = async (n: string, key = acc.key) =>
    (await ctx.call(`/v1/track?courier=delhivery&tracking_number=${n}`, { key }))[0].status;
  expect(await track("1234567890120")).toBe(200); // delivered
  expect(await track("1234567890124")).toBe(404); // the courier has no record: the client's number
  expect(await track("1234567890126")).toBe(502); // the courier's backend answers 5xx
  expect(await track("1234567890120", "ctk_not-a-key")).toBe(401); // refused before the handler
  const after = await counts();
  const added = (r: string) => (after[r] ?? 0) - (before[r] ?? 0);
  expect({
    ok: added("ok"),
    client_error: added("client_error"),
    courier_error: added("courier_error"),
    server_error: added("server_error"),
  }).toEqual({ ok: 1, client_error: 1, courier_error: 1, server_error: 0 });
});
