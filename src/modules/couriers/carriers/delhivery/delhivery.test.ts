import { afterAll, describe, expect, test } from "bun:test";
import { parseDelhivery } from "./adapter.ts";
import { CourierError } from "../../adapters/types.ts";
import { courierBySlug } from "../../catalogue.ts";
import { FakeClock } from "../../../../lib/clock.ts";
import { newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

describe("Delhivery samples", () => {
  test("in transit (9 scans): IST local time kept, UTC instant for ordering", () => {
    const snap = parseDelhivery(sample("delhivery/packages-json-intransit.json"), "");
    expect(snap.checkpoints).toHaveLength(9);
    const n = newest(snap.checkpoints);
    expect(n.state).toBe("in_transit");
    expect([n.localDate, n.localTime]).toEqual(["2024-09-22", "09:25"]);
    expect(n.at).toBe("2024-09-22T03:55:10.000Z");
    expect(n.location).toBe("Jalandhar, Punjab");
    expect(n.rawCode).toBe("X-ILL1F");
    expect(snap.checkpoints.find((c) => c.rawCode === "X-PPOM")?.subStatus).toBe("picked_up");
    expect(snap.checkpoints.filter((c) => c.state === "pending")).toHaveLength(2);
    expect(snap.destinationCity).toBe("Nakodar");
  });

  test("delivered (28 scans): newest delivered, the EOD-11 attempt is an exception with its remark", () => {
    const snap = parseDelhivery(sample("delhivery/packages-json-delivered.json"), "26805710004060");
    expect(snap.checkpoints).toHaveLength(28);
    const n = newest(snap.checkpoints);
    expect(n.state).toBe("delivered");
    expect([n.localDate, n.localTime]).toEqual(["2024-09-20", "15:41"]);
    const ndr = present(snap.checkpoints.find((c) => c.rawCode === "EOD-11"));
    expect(ndr.state).toBe("exception");
    expect(ndr.subStatus).toBe("delivery_attempt_failed");
    expect(ndr.remark).toBe("Consignee Unavailable");
    expect(snap.checkpoints.some((c) => c.state === "out_for_delivery")).toBe(true);
    expect(snap.summary?.state).toBe("delivered");
  });

  test("manifested: one scan, pending", () => {
    const snap = parseDelhivery(sample("delhivery/packages-json-manifested.json"), "84209310000302");
    expect(snap.checkpoints).toHaveLength(1);
    expect(snap.checkpoints[0]?.state).toBe("pending");
    expect(snap.originCity).toBe("Chennai");
  });

  test("not found inside a 200", () => {
    expect(() => parseDelhivery(sample("delhivery/packages-json-error.json"), "1")).toThrow(CourierError);
    try {
      parseDelhivery(sample("delhivery/packages-json-error.json"), "1");
    } catch (e) {
      expect((e as CourierError).kind).toBe("not_found");
      expect((e as CourierError).retryable).toBe(false);
    }
  });

  test.each([
    "",
    "<html>502 Bad Gateway</html>",
    '{"ShipmentData": "x"}',
    "[1,2",
    '{"ShipmentData":[{"Shipment":{"Scans":[{"ScanDetail":{"ScanDateTime":42}}]}}]}',
  ])("hostile body %p → backend error or empty history, never a crash", (body) => {
    try {
      const snap = parseDelhivery(body, "1");
      expect(snap.checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
    }
  });
});

describe("Delhivery through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const delhivery = present(courierBySlug("delhivery"));

  test("digit 0: delivered with full history", async () => {
    const { snapshot } = await sb.backends.lookup(delhivery, "1234567890120");
    expect(newest(snapshot.checkpoints).state).toBe("delivered");
    expect(snapshot.checkpoints.length).toBe(7);
  });

  test("digit 4 → not_found; 5 → timeout; 6 → backend", async () => {
    const kinds = [];
    for (const n of ["1234567890124", "1234567890125", "1234567890126"])
      kinds.push(
        await sb.backends.lookup(delhivery, n).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      );
    expect(kinds).toEqual(["not_found", "timeout", "backend"]);
  });

  test.each([
    ["20", "EOD-11", "delivery_attempt_failed"],
    ["21", "EOD-6", "delivery_attempt_failed"],
    ["25", "DLYDC-107", "delivery_attempt_failed"],
    ["27", "RT-104", "damaged"],
    ["28", "LT-100", "lost"],
    ["30", "DLYRPC-416", "held"],
  ])(
    "digit 3, family %s: the failed attempt carries NSL code %s (not always EOD-11) → exception/%s",
    async (f, code, sub) => {
      const { snapshot } = await sb.backends.lookup(delhivery, `1234567890${f}3`);
      expect(newest(snapshot.checkpoints)).toMatchObject({ state: "exception", subStatus: sub, rawCode: code });
    },
  );

  test("50 concurrent lookups of one AWB make one backend call", async () => {
    const awb = "1234567890111";
    const results = await Promise.all(Array.from({ length: 50 }, () => sb.backends.lookup(delhivery, awb)));
    expect(results.every((r) => r.snapshot.checkpoints.length === 3)).toBe(true);
    expect(sb.sim.calls("delhivery", awb)).toBe(1);
  });
});

describe("Delhivery estimated delivery (EDD)", () => {
  test("samples: ExpectedDeliveryDate (naive IST) is the EDD, kept once delivered; none while manifested", () => {
    expect(parseDelhivery(sample("delhivery/packages-json-intransit.json"), "").estimatedDelivery).toBe("2024-09-24");
    expect(parseDelhivery(sample("delhivery/packages-json-delivered.json"), "26805710004060").estimatedDelivery).toBe(
      "2024-09-22",
    );
    expect(
      parseDelhivery(sample("delhivery/packages-json-manifested.json"), "84209310000302").estimatedDelivery,
    ).toBeNull();
  });

  test("PromisedDeliveryDate stands in when ExpectedDeliveryDate is null; a .NET/SQL placeholder date is no estimate", () => {
    const doc = JSON.parse(sample("delhivery/packages-json-intransit.json"));
    const ship = doc.ShipmentData[0].Shipment;
    ship.ExpectedDeliveryDate = null;
    ship.PromisedDeliveryDate = "2024-09-25T23:59:59";
    expect(parseDelhivery(JSON.stringify(doc), "").estimatedDelivery).toBe("2024-09-25");
    ship.PromisedDeliveryDate = "0001-01-01T00:00:00";
    expect(parseDelhivery(JSON.stringify(doc), "").estimatedDelivery).toBeNull();
  });

  test("through the simulator: the planned day in IST from pickup on, kept once delivered; none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("delhivery", (d) => `123456789012${d}`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: EDD_COMMON.inTransit.edd },
      returned: { state: "returned", edd: null },
    });
  });
});
