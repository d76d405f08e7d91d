/** The prediction policy of src/domain/predictions.ts (docs/predictions.md). */
import { describe, expect, test } from "bun:test";
import {
  etaChanged,
  histogramQuantile,
  MIN_SAMPLES,
  pickStat,
  predictDelivery,
  regionOf,
  STALL_DEFAULT_S,
  STALL_FLOOR_S,
  stallThresholdS,
  statKeys,
  transitCdf,
  utcOffsetMinutes,
  type TransitStat,
} from "../../src/domain/predictions.ts";

const H = 3600;
const stat = (over: Partial<TransitStat> = {}): TransitStat => ({
  basis: "lane",
  transitP05: 50 * H,
  transitP10: 60 * H,
  transitP25: 75 * H,
  transitP50: 96 * H,
  transitP75: 115 * H,
  transitP90: 140 * H,
  transitP95: 160 * H,
  transitCount: MIN_SAMPLES,
  gapP50: 4 * H,
  gapP90: 20 * H,
  gapP95: 30 * H,
  gapCount: MIN_SAMPLES,
  ...over,
});

describe("statistics keys and choice", () => {
  test("lane, then the destination's region after its last comma, then the courier", () => {
    expect(statKeys(" Mumbai ", "Fresno, CA")).toEqual([
      ["lane", "mumbai", "fresno, ca"],
      ["region", "", "ca"],
      ["courier", "", ""],
    ]);
    expect(statKeys(null, "Pune")).toEqual([["courier", "", ""]]);
    expect(regionOf("pune")).toBeNull();
  });

  test("the most specific with at least 30 samples of what is asked", () => {
    const lane = stat({ transitCount: 29, gapCount: 40 });
    const courier = stat({ basis: "courier", transitCount: 500 });
    expect(pickStat([lane, undefined, courier], "transit")).toBe(courier);
    expect(pickStat([lane, undefined, courier], "gap")).toBe(lane);
    expect(pickStat([lane], "transit")).toBeUndefined();
  });
});

describe("histogram quantiles", () => {
  test("interpolated within a bucket, samples spread evenly across it", () => {
    const h = new Map([
      [0, 10],
      [1, 10],
    ]); // 10 samples in [0, 60), 10 in [60, 120)
    expect(histogramQuantile(h, 0.5, 60)).toBe(60);
    expect(histogramQuantile(h, 0.25, 60)).toBe(30);
    expect(histogramQuantile(h, 0.9, 60)).toBe(108);
    expect(histogramQuantile(new Map(), 0.5, 60)).toBeNaN();
  });
});

describe("predicted delivery", () => {
  const pickup = Date.parse("2026-11-03T04:00:00Z"); // 09:30 IST

  test("p50 day at the destination's zone; a window of whole days around it; absent below 30 deliveries", () => {
    const p = predictDelivery(stat(), pickup, 330)!;
    expect(p).toMatchObject({ date: "2026-11-07", basis: "lane", sample_size: 30 });
    // p10 (60 h) is 5 Nov 21:30 IST: about 11 % are delivered by the 6th's midnight, 1 % by the 5th's, so the 6th.
    expect(p.earliest).toBe("2026-11-06");
    // p90 (140 h) is 9 Nov 05:30 IST: about 86 % by the 9th's midnight, 95 % by the 10th's, so the 8th is the last day.
    expect(p.latest).toBe("2026-11-08");
    expect(predictDelivery(stat({ transitCount: 29 }), pickup, 330)).toBeUndefined();
    expect(predictDelivery(undefined, pickup, 330)).toBeUndefined();
  });

  test("the transit CDF meets the stored quantiles and stays within 0–1", () => {
    const s = stat();
    expect(transitCdf(s, 96 * H)).toBeCloseTo(0.5, 3);
    expect(transitCdf(s, 140 * H)).toBeCloseTo(0.9, 3);
    expect(transitCdf(s, 1)).toBeGreaterThanOrEqual(0);
    expect(transitCdf(s, 10_000 * H)).toBeLessThanOrEqual(1);
  });

  test("the destination's offset from a checkpoint's wall time against its instant", () => {
    expect(utcOffsetMinutes({ localDate: "2026-11-03", localTime: "09:30", at: "2026-11-03T04:00:00.000Z" })).toBe(330);
    expect(utcOffsetMinutes({ localDate: "2026-11-02", localTime: "20:00", at: "2026-11-03T04:00:00Z" })).toBe(-480);
    expect(utcOffsetMinutes({ localDate: "garbage", localTime: "", at: "x" })).toBe(0);
  });
});

describe("stall threshold and ETA change", () => {
  test("p95 gap, never below 24 h; 72 h without 30 gaps", () => {
    expect(stallThresholdS(stat({ gapP95: 30 * H }))).toBe(30 * H);
    expect(stallThresholdS(stat({ gapP95: 5 * H }))).toBe(STALL_FLOOR_S);
    expect(stallThresholdS(stat({ gapCount: 29 }))).toBe(STALL_DEFAULT_S);
    expect(stallThresholdS(undefined)).toBe(STALL_DEFAULT_S);
  });

  test("a move of one calendar day or more; appearing or vanishing is none", () => {
    expect(etaChanged("2026-11-06", "2026-11-07")).toBe(true);
    expect(etaChanged("2026-11-06", "2026-11-04")).toBe(true);
    expect(etaChanged("2026-11-06", "2026-11-06")).toBe(false);
    expect(etaChanged(null, "2026-11-06")).toBe(false);
    expect(etaChanged("2026-11-06", null)).toBe(false);
  });
});
