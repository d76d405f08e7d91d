/**
 * Every failed-attempt reason family of the sandbox (README.md, "Sandbox couriers": digit 3, the two digits before it
 * pick the reason) through each courier's twin and its real adapter, read back through `GET /v1/track`: the shipment
 * and its newest checkpoint are `exception` (spec: Status table, "failed attempt") and `ReasonCode` is the README
 * table's code (docs/ndr.md), for every courier alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAILED_ATTEMPT_REMARKS } from "../../src/twin-kit/scenario.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  // 17TRACK's register-then-poll path answers at once, so the smartr rows wait on nothing.
  ctx = await testContext({ SANDBOX_ASYNC_SECONDS: "0" });
  key = (await ctx.account("business")).key;
});
afterAll(() => ctx.close());

/** The README's table of families: `| 21 | remark | \`customer_refused\` |`, and the `any other` row. */
function readmeFamilies(): { family: string; remark: string; reason: string }[] {
  const text = require("node:fs").readFileSync(`${import.meta.dir}/../../README.md`, "utf8") as string;
  const start = text.indexOf("Digit 3's reason families");
  expect(start).toBeGreaterThan(0);
  const rows: { family: string; remark: string; reason: string }[] = [];
  for (const line of text.slice(start).split("\n").slice(1)) {
    const m = /^\| (\d\d|any other) \| (.+?) \| `([a-z_]+)` \|$/.exec(line);
    if (m) rows.push({ family: m[1]!, remark: m[2]!, reason: m[3]! });
    else if (rows.length > 0 && !line.startsWith("|")) break;
  }
  return rows;
}

const FAMILIES = readmeFamilies();

/**
 * A valid number of each courier's format whose last digit is 3 and whose two digits before it are `family`: the
 * three couriers whose twins send reason codes or fixed wording of their own, then every other twin (smartr: 17TRACK).
 */
const AWB: Record<string, (family: string) => string> = {
  bluedart: (f) => `501123${f}3`,
  delhivery: (f) => `1234567890${f}3`,
  dhl: (f) => `1234567${f}3`,
  ups: (f) => `1Z12345E0205277${f}3`,
  dtdc: (f) => `1234567${f}3`,
  ecomexpress: (f) => `801234${f}3`,
  xpressbees: (f) => `141234567890${f}3`,
  fedex: (f) => `123456789${f}3`,
  aramex: (f) => `1234567${f}3`,
  smartr: (f) => `123456${f}3`,
};

describe("the README's reason families", () => {
  test("one row per scenario remark plus the default, each remark the scenario's own", () => {
    const numbered = FAMILIES.filter((r) => r.family !== "any other");
    expect(numbered.map((r) => Number(r.family))).toEqual(Object.keys(FAILED_ATTEMPT_REMARKS).map(Number));
    for (const r of numbered) expect(r.remark).toStartWith(FAILED_ATTEMPT_REMARKS[Number(r.family)]!);
    expect(FAMILIES.filter((r) => r.family === "any other")).toHaveLength(1);
    expect(FAMILIES.find((r) => r.family === "30")?.reason).toBe("other");
  });
});

for (const courier of Object.keys(AWB)) {
  describe(`${courier}: every reason family through the twin and the adapter`, () => {
    for (const { family, reason } of FAMILIES) {
      const awb = AWB[courier]!(family === "any other" ? "99" : family);
      test(`${family} (${awb}) → exception, ReasonCode ${reason}`, async () => {
        const [res, body] = await ctx.call(`/v1/track?courier=${courier}&tracking_number=${awb}`, { key });
        expect(res.status).toBe(200);
        const newest = body.data.Checkpoints[0];
        expect({ shipment: body.data.ShipmentState, state: newest.CheckpointState, reason: newest.ReasonCode }).toEqual(
          {
            shipment: "exception",
            state: "exception",
            reason,
          },
        );
      });
    }
  });
}
