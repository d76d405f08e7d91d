/** When a stored change writes `tracking.eta_changed` (src/modules/following/history-events.ts; docs/predictions.md). */
import { describe, expect, test } from "bun:test";
import type { PredictedDelivery } from "../../src/domain/predictions.ts";
import { etaMove } from "../../src/modules/following/history-events.ts";
import type { ShipmentRecord } from "../../src/modules/following/normalise.ts";

const predicted = (date: string): PredictedDelivery => ({
  date,
  earliest: date,
  latest: date,
  basis: "lane",
  sample_size: 30,
});
const record = (over: Partial<ShipmentRecord> = {}): ShipmentRecord => ({
  state: "in_transit",
  subStatus: null,
  mostRecentStatus: "In transit",
  checkpoints: [],
  originCity: null,
  destinationCity: null,
  deliveredAt: null,
  podUrl: null,
  additionalInfo: null,
  estimatedDelivery: null,
  ...over,
});

describe("etaMove", () => {
  test("without a courier EDD, our predicted date moving by a day is a move", () => {
    expect(
      etaMove(
        { estimatedDelivery: null, predictedDelivery: predicted("2026-11-06") },
        record(),
        predicted("2026-11-07"),
      ),
    ).toEqual({ previous: "2026-11-06", current: "2026-11-07" });
    expect(
      etaMove(
        { estimatedDelivery: null, predictedDelivery: predicted("2026-11-06") },
        record(),
        predicted("2026-11-06"),
      ),
    ).toBeUndefined();
  });

  test("the courier's EDD wins over our prediction on both sides", () => {
    const before = { estimatedDelivery: "2026-11-06", predictedDelivery: predicted("2026-11-01") };
    expect(etaMove(before, record({ estimatedDelivery: "2026-11-06" }), predicted("2026-11-09"))).toBeUndefined();
    expect(etaMove(before, record({ estimatedDelivery: "2026-11-05" }), predicted("2026-11-06"))).toEqual({
      previous: "2026-11-06",
      current: "2026-11-05",
    });
  });

  test("none on first sight, once finished, or when an estimate appears", () => {
    expect(etaMove(undefined, record({ estimatedDelivery: "2026-11-06" }), undefined)).toBeUndefined();
    expect(
      etaMove(
        { estimatedDelivery: "2026-11-06", predictedDelivery: null },
        record({ state: "delivered", estimatedDelivery: "2026-11-04" }),
        undefined,
      ),
    ).toBeUndefined();
    expect(
      etaMove(
        { estimatedDelivery: null, predictedDelivery: null },
        record({ estimatedDelivery: "2026-11-06" }),
        undefined,
      ),
    ).toBeUndefined();
  });
});
