import { describe, expect, test } from "bun:test";
import type { RawCheckpoint, TrackingSnapshot } from "../../src/domain/checkpoint.ts";
import { applySnapshot } from "../../src/modules/following/normalise.ts";
import type { ShipmentState } from "../../src/domain/states.ts";

const cp = (state: ShipmentState, hour: number, activity: string = state): RawCheckpoint => ({
  state,
  subStatus: null,
  activity,
  location: "Pune",
  localDate: "2026-11-05",
  localTime: `${String(hour).padStart(2, "0")}:00`,
  at: `2026-11-05T${String(hour).padStart(2, "0")}:00:00.000Z`,
  rawCode: state.toUpperCase(),
  rawStatus: null,
  remark: null,
});
const snap = (checkpoints: RawCheckpoint[], extra: Partial<TrackingSnapshot> = {}): TrackingSnapshot => ({
  checkpoints,
  originCity: null,
  destinationCity: null,
  podUrl: null,
  remark: null,
  ...extra,
});

describe("change detection (spec Events rules 1–2; docs/spec-map.md, Decisions: transitions)", () => {
  const base = applySnapshot(undefined, snap([cp("pending", 1), cp("in_transit", 2)])).record;

  test("first sight yields no event; state is the newest checkpoint's, history newest first", () => {
    const r = applySnapshot(undefined, snap([cp("in_transit", 2), cp("pending", 1)]));
    expect(r.event).toBeNull();
    expect(r.record.state).toBe("in_transit");
    expect(r.record.checkpoints.map((c) => c.localTime)).toEqual(["02:00", "01:00"]);
  });

  test("a state change with its own event wins over tracking.updated (one event per change)", () => {
    const r = applySnapshot(base, snap([cp("pending", 1), cp("in_transit", 2), cp("out_for_delivery", 3)]));
    expect(r.event).toBe("tracking.out_for_delivery");
  });

  test("more checkpoints with the same state → tracking.updated", () => {
    const r = applySnapshot(base, snap([cp("pending", 1), cp("in_transit", 2), cp("in_transit", 3, "Arrived at hub")]));
    expect(r.event).toBe("tracking.updated");
    expect(r.record.checkpoints).toHaveLength(3);
  });

  test("re-ordered or duplicated checkpoints are not more checkpoints", () => {
    const r = applySnapshot(base, snap([cp("in_transit", 2), cp("in_transit", 2), cp("pending", 1)]));
    expect(r.event).toBeNull();
    expect(r.record.checkpoints).toHaveLength(2);
  });

  test("checkpoints the courier drops are kept (full known history)", () => {
    const r = applySnapshot(base, snap([cp("in_transit", 2)]));
    expect(r.record.checkpoints).toHaveLength(2);
    expect(r.event).toBeNull();
  });

  test("exception, returned and cancelled all yield tracking.exception; delivered yields tracking.delivered", () => {
    for (const s of ["exception", "returned", "cancelled"] as const)
      expect(applySnapshot(base, snap([cp(s, 5)])).event).toBe("tracking.exception");
    expect(applySnapshot(base, snap([cp("delivered", 5)])).event).toBe("tracking.delivered");
  });

  test("a terminal state stays unless the courier later shows a newer non-terminal checkpoint", () => {
    const delivered = applySnapshot(base, snap([cp("delivered", 5)])).record;
    const older = applySnapshot(delivered, snap([cp("in_transit", 4, "late scan")]));
    expect(older.record.state).toBe("delivered");
    expect(older.event).toBe("tracking.updated");
    const newer = applySnapshot(delivered, snap([cp("in_transit", 6, "re-routed")]));
    expect(newer.record.state).toBe("in_transit");
    expect(newer.event).toBe("tracking.in_transit");
  });

  test("no checkpoints: the courier's shipment-level status decides (manifested → pending, isEmptyTable)", () => {
    const r = applySnapshot(undefined, snap([], { summary: { state: "pending", subStatus: "info_received" } }));
    expect(r.record.state).toBe("pending");
    expect(r.record.checkpoints).toEqual([]);
    expect(r.record.mostRecentStatus).toBe("Order information received");
  });

  test("the delivered date is the courier's local date, not the UTC one (00:30 IST is 19:00 UTC the day before)", () => {
    const late: RawCheckpoint = {
      ...cp("delivered", 0),
      localDate: "2026-11-06",
      localTime: "00:30",
      at: "2026-11-05T19:00:00.000Z",
    };
    expect(applySnapshot(base, snap([late])).record.deliveredAt).toBe("2026-11-06");
  });
});
