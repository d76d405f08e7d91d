/**
 * `GET /v1/estimates` (docs/predictions.md, "Estimates"): pincode and city answers, ranking, the fallback chain
 * pincode lane → region → courier, working-day arithmetic over Sundays and holidays (fake clock), caching headers
 * and 304, no quota unit, the `/v1` rate limit, and the rebuild's pincode rows; plus the estimate backtest per basis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { transitStats } from "../../src/db/schema/index.ts";
import { estimateDelivery } from "../../src/domain/estimates.ts";
import { isWorkingDay, nextWorkingDay } from "../../src/domain/holidays.ts";
import { canonicalCity, parsePlace } from "../../src/domain/places.ts";
import type { Basis, TransitStat } from "../../src/domain/predictions.ts";
import { backtestEstimates } from "../../src/modules/predictions/backtest.ts";
import { rebuildTransitStats } from "../../src/modules/predictions/rebuild.ts";
import { loadStatsIndex } from "../../src/modules/predictions/stats.ts";
import { parseDelhivery } from "../../src/modules/couriers/carriers/delhivery/adapter.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { sample } from "../helpers/samples.ts";
import { generateDeliveries, insertDeliveries, pincodeLanes, type LaneModel } from "../helpers/history.ts";

const H = 3600;
/** A statistics row with transit p10/p50/p90 in hours (the other quantiles spread around them). */
function stat(basis: Basis, h10: number, h50: number, h90: number, n: number): TransitStat {
  return {
    basis,
    transitP05: h10 * 0.9 * H,
    transitP10: h10 * H,
    transitP25: ((h10 + h50) / 2) * H,
    transitP50: h50 * H,
    transitP75: ((h50 + h90) / 2) * H,
    transitP90: h90 * H,
    transitP95: h90 * 1.1 * H,
    transitCount: n,
    gapP50: null,
    gapP90: null,
    gapP95: null,
    gapCount: 0,
  };
}

describe("working days and places", () => {
  test("Sundays and listed holidays are not working days; a ship date on one is picked up the next working day", () => {
    expect(isWorkingDay("2026-11-22")).toBe(false); // Sunday
    expect(isWorkingDay("2026-11-24")).toBe(false); // Guru Nanak's Birthday, a Tuesday
    expect(isWorkingDay("2027-01-26")).toBe(false); // Republic Day, every year
    expect(isWorkingDay("2026-11-21")).toBe(true); // Saturday
    expect(nextWorkingDay("2026-11-22")).toBe("2026-11-23");
  });

  test("estimateDelivery runs the quantiles on a clock that stops on Sundays and holidays", () => {
    const s = stat("pincode_lane", 30, 40, 60, 50);
    // Friday noon + 40 h × 6/7 = Saturday; p90 60 h × 6/7 skips Sunday (also Diwali) to Monday.
    expect(estimateDelivery(s, "2026-11-06")).toEqual({
      date: "2026-11-07",
      earliest: "2026-11-07",
      latest: "2026-11-09",
      basis: "pincode_lane",
      sample_size: 50,
      pickup_date: "2026-11-06",
    });
    // Monday before a Tuesday holiday: Wednesday, not Tuesday; a Sunday ship date counts from Monday.
    expect(estimateDelivery(s, "2026-11-23")?.date).toBe("2026-11-25");
    expect(estimateDelivery(s, "2026-11-22")).toMatchObject({ date: "2026-11-25", pickup_date: "2026-11-23" });
    expect(estimateDelivery(stat("courier", 30, 40, 60, 29), "2026-11-06")).toBeUndefined();
  });

  test("places: a PIN (first digit 1–9, spaces ignored) or a city under one name for all its spellings", () => {
    expect(parsePlace("560 001")).toEqual({ kind: "pincode", pincode: "560001" });
    expect(parsePlace("012345")).toBeNull();
    expect(parsePlace("12345")).toBeNull();
    expect(parsePlace("Bangalore")).toEqual({ kind: "city", city: "bengaluru" });
    expect(parsePlace("<script>")).toBeNull();
    expect(canonicalCity("Chennai_Chrompet_DPC (Tamil Nadu)")).toBe("chennai");
    expect(canonicalCity("  NEW  Delhi ")).toBe("delhi");
    expect(canonicalCity("Bombay")).toBe(canonicalCity("mumbai"));
  });
});

describe("GET /v1/estimates", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await testContext();
    const rebuiltAt = new Date(ctx.clock.now());
    const row = (courier: string, s: TransitStat, origin = "", destination = "") => ({
      ...s,
      courier,
      origin,
      destination,
      rebuiltAt,
    });
    await ctx.tdb.db.insert(transitStats).values([
      row("delhivery", stat("pincode_lane", 30, 40, 60, 50), "400", "560"),
      row("delhivery", stat("lane", 40, 60, 80, 70), "mumbai", "bangalore"),
      row("delhivery", stat("lane", 40, 90, 120, 35), "bombay", "bengaluru"), // fewer samples: the other spelling wins
      row("delhivery", stat("region", 50, 72, 100, 100), "", "pin:5"),
      row("delhivery", stat("courier", 60, 96, 130, 500)),
      row("bluedart", stat("courier", 20, 24, 30, 40)),
      row("dtdc", stat("courier", 10, 12, 14, 20)), // under 30: no estimate
    ]);
    ctx.deps.services.transitStats.invalidate();
  });
  afterAll(() => ctx?.close());
  let key: string;
  beforeEach(async () => (key = (await ctx.account("business")).key));
  const get = (q: string, init: RequestInit = {}) => ctx.call(`/v1/estimates?${q}`, { key, ...init });

  test("pincodes: every courier with history, ranked, from the most specific basis", async () => {
    const [res, body] = await get("origin=400001&destination=560001&ship_date=2026-11-06");
    expect(res.status).toBe(200);
    expect(body).toEqual({
      success: true,
      data: {
        origin: { kind: "pincode", value: "400001" },
        destination: { kind: "pincode", value: "560001" },
        ship_date: "2026-11-06",
        estimates: [
          {
            courier: "bluedart",
            date: "2026-11-07",
            earliest: "2026-11-07",
            latest: "2026-11-07",
            pickup_date: "2026-11-06",
            basis: "courier",
            sample_size: 40,
          },
          {
            courier: "delhivery",
            date: "2026-11-07",
            earliest: "2026-11-07",
            latest: "2026-11-09",
            pickup_date: "2026-11-06",
            basis: "pincode_lane",
            sample_size: 50,
          },
        ],
        count: 2,
      },
    });
  });

  test("fallback: another sorting district of the region → region; a region without history → courier", async () => {
    const basis = async (q: string) => (await get(`courier=delhivery&${q}`))[1].data.estimates[0];
    expect(await basis("origin=400001&destination=575001")).toMatchObject({ basis: "region", sample_size: 100 });
    expect(await basis("origin=400001&destination=800001")).toMatchObject({ basis: "courier", sample_size: 500 });
    expect(await basis("origin=Mumbai&destination=560001")).toMatchObject({ basis: "region" });
  });

  test("cities match the courier's spelling: Bombay → Bengaluru reads the mumbai → bangalore lane", async () => {
    const [, body] = await get("origin=Bombay&destination=Bengaluru&courier=delhivery&ship_date=2026-11-06");
    expect(body.data.origin).toEqual({ kind: "city", value: "mumbai" });
    expect(body.data.estimates).toEqual([
      expect.objectContaining({ courier: "delhivery", basis: "lane", sample_size: 70 }),
    ]);
  });

  test("ship date: defaults to today in India (fake clock); a holiday inside the transit moves the date", async () => {
    const [, today] = await get("origin=400001&destination=560001&courier=delhivery");
    expect(today.data.ship_date).toBe("2026-11-05");
    const [, monday] = await get("origin=400001&destination=560001&courier=delhivery&ship_date=2026-11-23");
    expect(monday.data.estimates[0]).toMatchObject({ date: "2026-11-25", pickup_date: "2026-11-23" });
    const [, sunday] = await get("origin=400001&destination=560001&courier=delhivery&ship_date=2026-11-22");
    expect(sunday.data.estimates[0]).toMatchObject({ date: "2026-11-25", pickup_date: "2026-11-23" });
  });

  test("not enough history: 200, an empty list and a reason; an unknown courier: 404", async () => {
    const [res, body] = await get("origin=400001&destination=560001&courier=dtdc");
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({ estimates: [], count: 0, reason: "not_enough_history" });
    const [r404, b404] = await get("origin=400001&destination=560001&courier=delhivry");
    expect(r404.status).toBe(404);
    expect(b404.error).toMatchObject({ code: "COURIER_NOT_FOUND", did_you_mean: "delhivery" });
  });

  test("422 in the validation shape for a bad PIN, city or date", async () => {
    for (const [q, field] of [
      ["origin=012345&destination=560001", "origin"],
      ["origin=400001&destination=56001", "destination"],
      ["origin=400001&destination=%3Cscript%3E", "destination"],
      ["origin=400001&destination=560001&ship_date=2026-02-30", "ship_date"],
      ["origin=400001&destination=560001&ship_date=2026-11-04", "ship_date"], // yesterday
      ["origin=400001&destination=560001&ship_date=2027-01-05", "ship_date"], // 61 days ahead
      ["origin=400001&destination=560001&ship_date=tomorrow", "ship_date"],
      ["destination=560001", "origin"],
    ] as const) {
      const [res, body] = await get(q);
      expect(res.status, q).toBe(422);
      expect(body.detail[0].loc, q).toEqual(["query", field]);
    }
  });

  test("cacheable: Cache-Control and ETag; If-None-Match answers 304 without a body; another query another tag", async () => {
    const q = "origin=400001&destination=560001&ship_date=2026-11-06";
    const [res] = await get(q);
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.headers.get("cache-control")).toBe("private, max-age=300");
    const [r304, b304] = await get(q, { headers: { "if-none-match": `"x", W/${etag}` } });
    expect(r304.status).toBe(304);
    expect(b304).toBeNull();
    expect(r304.headers.get("etag")).toBe(etag);
    expect(r304.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
    const [other] = await get("origin=400001&destination=560001&ship_date=2026-11-09", {
      headers: { "if-none-match": etag },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get("etag")).not.toBe(etag);
  });

  test("no quota unit: a lookup after estimates is the account's first; the /v1 rate limit applies", async () => {
    const a = await ctx.account("free"); // 10 requests a minute
    for (let i = 0; i < 9; i++)
      expect((await ctx.call("/v1/estimates?origin=400001&destination=560001", { key: a.key }))[0].status).toBe(200);
    const [track, tb] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890101", { key: a.key });
    expect(track.status).toBe(200);
    expect(tb.usage.used).toBe(1);
    const [limited, lb] = await ctx.call("/v1/estimates?origin=400001&destination=560001", { key: a.key });
    expect(limited.status).toBe(429);
    expect(lb.error.code).toBe("RATE_LIMITED");
  });
});

describe("PINs of a followed shipment", () => {
  test("given on follow (kept when known), changed by PATCH, read from Delhivery's answer; the prediction uses the pincode lane", async () => {
    const ctx = await testContext();
    try {
      const a = await ctx.account("pro");
      const pins = async (awb: string) =>
        (
          await ctx.tdb.sql<{ o: string | null; d: string | null }[]>`
            select origin_pincode as o, destination_pincode as d from shipments where tracking_number = ${awb}`
        )[0];
      const follow = (awb: string, extra: object) =>
        ctx.call("/v1/shipments", {
          key: a.key,
          method: "POST",
          body: JSON.stringify({ shipments: [{ courier: "bluedart", tracking_number: awb, ...extra }] }),
        });
      const [res] = await follow("12345678901", { origin_pincode: "400001", destination_pincode: "560001" });
      expect(res.status).toBe(202);
      expect(await pins("12345678901")).toEqual({ o: "400001", d: "560001" });
      await follow("12345678901", { destination_pincode: "110001" }); // already known: kept
      expect(await pins("12345678901")).toEqual({ o: "400001", d: "560001" });
      const [patched] = await ctx.call("/v1/shipments/bluedart/12345678901", {
        key: a.key,
        method: "PATCH",
        body: JSON.stringify({ destination_pincode: "110001" }),
      });
      expect(patched.status).toBe(200);
      expect(await pins("12345678901")).toEqual({ o: "400001", d: "110001" });
      const [bad, badBody] = await follow("12345678902", { origin_pincode: "040001" });
      expect(bad.status).toBe(422);
      expect(badBody.detail[0].loc).toEqual(["body", "shipments", 0, "origin_pincode"]);

      // A followed shipment with both PINs: a pincode lane with history backs its prediction.
      const awb = "1234567890121";
      const [track] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: a.key });
      expect(track.status).toBe(200);
      await ctx.call(`/v1/shipments/delhivery/${awb}`, {
        key: a.key,
        method: "PATCH",
        body: JSON.stringify({ origin_pincode: "400001", destination_pincode: "560001" }),
      });
      await ctx.tdb.db.insert(transitStats).values({
        ...stat("pincode_lane", 30, 40, 60, 45),
        courier: "delhivery",
        origin: "400",
        destination: "560",
        rebuiltAt: new Date(ctx.clock.now()),
      });
      ctx.deps.services.transitStats.invalidate();
      const [, read] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: a.key });
      expect(read.data.PredictedDelivery).toMatchObject({ basis: "pincode_lane", sample_size: 45 });
    } finally {
      await ctx.close();
    }
  });
});

test("Delhivery's answer gives the consignee's PIN as the destination PIN", () => {
  expect(parseDelhivery(sample("delhivery/packages-json-delivered.json"), "26805710004060").destinationPincode).toBe(
    "110008",
  );
});

describe("pincode statistics and the estimate backtest", () => {
  test("the rebuild keeps pincode lanes and postal regions; the backtest reports each basis", async () => {
    const ctx = await testContext();
    try {
      const NOW = ctx.clock.now();
      const base: LaneModel = {
        courier: "delhivery",
        origin: "Mumbai",
        destination: "Bengaluru",
        medianH: 60,
        sigma: 0.3,
        meanGapH: 8,
      };
      const lanes = pincodeLanes([base]);
      await insertDeliveries(ctx.tdb.sql, generateDeliveries(lanes, 120, NOW - 3_600_000, 3));
      await rebuildTransitStats(ctx.tdb.db, NOW);
      const rows = await ctx.tdb.sql<{ basis: string; origin: string; destination: string; n: number }[]>`
        select basis, origin, destination, transit_count as n from transit_stats order by basis, origin, destination`;
      expect(rows.map((r) => [r.basis, r.origin, r.destination])).toEqual([
        ["courier", "", ""],
        ["lane", "mumbai", "bengaluru"],
        ["pincode_lane", "400", "560"],
        ["pincode_lane", "400", "562"],
        ["region", "", "pin:5"],
      ]);
      const cases = generateDeliveries(lanes, 200, NOW, 4).map((d) => ({
        courier: d.lane.courier,
        originCity: d.lane.origin,
        destinationCity: d.lane.destination,
        originPincode: d.lane.originPincode,
        destinationPincode: d.lane.destinationPincode,
        checkpoints: d.checkpoints,
        deliveredOn: d.deliveredOn,
        courierEdd: d.courierEdd,
      }));
      const figures = await backtestEstimates(await loadStatsIndex(ctx.tdb.db), cases);
      expect(figures.map((f) => f.basis)).toEqual(["pincode_lane", "lane", "region", "courier"]);
      for (const f of figures) {
        expect(f.estimated).toBe(200);
        expect(f.insideShare!).toBeWithin(0.6, 1);
        expect(f.medianAbsErrorDays!).toBeLessThanOrEqual(2);
      }
      expect(figures[0]!.answered).toBe(200); // both PINs given: the pincode lane answers
    } finally {
      await ctx.close();
    }
  });

  test("`bun run backtest:edd --generated 3000` prints the estimate's figures per basis", () => {
    const p = Bun.spawnSync(["bun", "run", "scripts/backtest-edd.ts", "--generated", "3000"], {
      cwd: `${import.meta.dir}/../..`,
      env: process.env,
    });
    expect(p.exitCode).toBe(0);
    const lines = p.stdout.toString().trim().split("\n");
    const at = lines.findIndex((l) => l.startsWith("estimate (GET /v1/estimates) by basis"));
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 5).map((l) => l.split(/\s+/)[0])).toEqual([
      "pincode_lane",
      "lane",
      "region",
      "courier",
    ]);
    // 3,000 deliveries over 336 pincode lanes: no pincode lane reaches 30, every postal region does.
    const figures = JSON.parse(lines[at + 5]!) as { basis: string; estimated: number; answered: number }[];
    expect(figures.find((f) => f.basis === "pincode_lane")).toMatchObject({ estimated: 0, answered: 0 });
    expect(figures.find((f) => f.basis === "region")).toMatchObject({ estimated: 10_000, answered: 10_000 });
  }, 120_000);
});
