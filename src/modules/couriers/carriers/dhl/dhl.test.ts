import { afterAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../lib/clock.ts";
import { dhlAdapter, dhlRule, parseDhl } from "./adapter.ts";
import { CourierError } from "../../adapters/types.ts";
import { courierBySlug } from "../../catalogue.ts";
import { courierLoopback, kindOf, newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

const dhl = present(courierBySlug("dhl"));

const loopback = (reply: (req: Request, url: URL) => Response | Promise<Response>) =>
  courierLoopback("dhl", { DHL_API_KEY: "k-123" }, (_s, _i, req) => reply(req, new URL(req.url)), "/base");

describe("DHL samples", () => {
  test("dhl/unified-track.json: statusCode pre-transit wins over status DELIVERED; remark, POD, wall time kept", () => {
    const snap = parseDhl(sample("dhl/unified-track.json"), "7777777770");
    expect(snap.checkpoints).toHaveLength(1);
    const n = newest(snap.checkpoints);
    expect(n.state).toBe("pending");
    expect([n.localDate, n.localTime]).toEqual(["2018-03-02", "07:53"]);
    expect(n.at).toBe("2018-03-02T07:53:47.000Z");
    expect(n.rawCode).toBe("pre-transit");
    expect(n.rawStatus).toBe("DELIVERED");
    expect(n.location).toBe("Oderweg 2, AMSTERDAM");
    expect(n.remark).toBe("The shipment is pending completion of customs inspection.");
    expect(snap.summary?.state).toBe("pending");
    expect(snap.podUrl).toBe("https://webpod.dhl.com/webPOD/DHLePODRequest");
    expect(snap.remark).toBe("The shipment is pending completion of customs inspection.");
  });

  test("dhl/unified-track-error-404.json → not_found", () => {
    expect(kindOf(() => parseDhl(sample("dhl/unified-track-error-404.json"), "8264715546"))).toBe("not_found");
  });

  test("catalogue pattern accepts the sample numbers", () => {
    for (const n of ["7777777770", "8264715546", "JD014600006281230704"]) expect(dhl.awb.pattern.test(n)).toBe(true);
  });

  test("mapping: statusCode table, O/R/C derived from text, failure sub-reason from text, never delivered by default", () => {
    expect(dhlRule("transit", "Shipment is out with courier for delivery", "").state).toBe("out_for_delivery");
    expect(dhlRule("transit", "", "Out for delivery")).toEqual({ state: "out_for_delivery" });
    expect(dhlRule("delivered", "Returned to shipper", "")).toEqual({ state: "returned", sub: "rto_delivered" });
    expect(dhlRule("transit", "Shipment is being returned to shipper", "")).toEqual({
      state: "exception",
      sub: "rto_initiated",
    });
    expect(dhlRule("failure", "Delivery attempted", "recipient not available; delivery attempt failed")).toEqual({
      state: "exception",
      sub: "delivery_attempt_failed",
    });
    expect(dhlRule("failure", "Shipment cancelled", "").state).toBe("cancelled");
    expect(dhlRule("unknown", "", "").state).toBe("pending");
    expect(dhlRule("", "", "something new").state).toBe("in_transit");
  });

  test.each([
    "",
    "<html><body>502 Bad Gateway</body></html>",
    '{"shipments": "x"}',
    '{"shipments":[{"events":[{"timestamp":42}]',
    '{"shipments":[{"events":[{"timestamp":42,"statusCode":7}]}]}',
  ])("hostile body %p → backend error or empty history, never a crash", (body) => {
    try {
      expect(parseDhl(body, "1").checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
      expect((e as CourierError).kind).toBe("backend");
    }
  });
});

describe("DHL request and HTTP failures (loopback)", () => {
  test("GET /track/shipments?trackingNumber= with DHL-API-Key and Accept", async () => {
    const lb = loopback(
      () => new Response(sample("dhl/unified-track.json"), { headers: { "content-type": "application/json" } }),
    );
    try {
      const snap = await dhlAdapter.track("7777777770", lb.ctx);
      expect(snap.checkpoints).toHaveLength(1);
      expect(lb.seen).toHaveLength(1);
      const r = present(lb.seen[0]);
      expect(r.method).toBe("GET");
      expect(r.path).toBe("/base/track/shipments");
      expect(r.query.get("trackingNumber")).toBe("7777777770");
      expect(r.headers.get("dhl-api-key")).toBe("k-123");
      expect(r.headers.get("accept")).toBe("application/json");
      expect(r.body).toBe("");
    } finally {
      await lb.close();
    }
  });

  test.each([
    [401, '{"status":401,"title":"Unauthorized"}', "auth"],
    [403, "Forbidden", "rate_limited"],
    [429, '{"status":429,"title":"Too many requests"}', "rate_limited"],
    [404, sample("dhl/unified-track-error-404.json"), "not_found"],
    [404, "<html>no such path</html>", "backend"],
    [500, "oops", "backend"],
    [503, "<html>down</html>", "backend"],
    [200, "<html>maintenance</html>", "backend"],
    [200, '{"shipments":[{"id":"1"', "backend"],
  ])("HTTP %d %p → %s", async (status, body, kind) => {
    const lb = loopback(() => new Response(body, { status }));
    try {
      const got = await dhlAdapter.track("1234567890", lb.ctx).then(
        () => "ok",
        (e) => (e instanceof CourierError ? e.kind : "crash"),
      );
      expect(got).toBe(kind);
    } finally {
      await lb.close();
    }
  });
});

describe("DHL through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const look = (n: string) => sb.backends.lookup(dhl, n).then((r) => r.snapshot);
  const kind = (n: string) =>
    sb.backends.lookup(dhl, n).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test.each([
    ["20", "Delivery attempt failed; Consignee not available", "delivery_attempt_failed"],
    ["25", "Delivery attempt failed; Office closed", "delivery_attempt_failed"],
    ["30", "Shipment held: awaiting instructions", "held"],
  ])(
    "3, family %s: the failure describes the family's reason (%p), never always 'recipient not available'",
    async (f, description, sub) => {
      const c = newest((await look(`1234567${f}3`)).checkpoints);
      expect(c).toMatchObject({ state: "exception", subStatus: sub, rawCode: "failure", activity: description });
    },
  );

  test("0: delivered, full history, POD URL", async () => {
    const snap = await look("1234567890");
    expect(snap.checkpoints).toHaveLength(7);
    expect(newest(snap.checkpoints).state).toBe("delivered");
    expect(snap.summary?.state).toBe("delivered");
    expect(snap.podUrl).toBe("https://pod.sandbox.example/1234567890.jpg");
    expect(newest(snap.checkpoints).localTime).toMatch(/^\d{2}:\d{2}$/);
    expect(sb.sim.calls("dhl", "1234567890")).toBe(1);
  });

  test("1: in transit, one checkpoint per step until delivered", async () => {
    const n = "1234567891";
    const states: string[] = [];
    for (let i = 0; i <= 4; i++) {
      const snap = await look(n);
      states.push(`${snap.checkpoints.length}:${newest(snap.checkpoints).state}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["3:in_transit", "4:in_transit", "5:in_transit", "6:out_for_delivery", "7:delivered"]);
  });

  test("2: out for delivery, next step delivered", async () => {
    const n = "1234567892";
    expect(newest((await look(n)).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await look(n)).checkpoints).state).toBe("delivered");
  });

  test("3: failed attempt with remark, then return to origin, then returned", async () => {
    const n = "1234567893";
    const first = newest((await look(n)).checkpoints);
    expect([first.state, first.subStatus, first.remark]).toEqual([
      "exception",
      "delivery_attempt_failed",
      "Consignee not available",
    ]);
    clock.advance(3_600_000);
    const second = newest((await look(n)).checkpoints);
    expect([second.state, second.subStatus]).toEqual(["exception", "rto_initiated"]);
    clock.advance(3_600_000);
    expect(newest((await look(n)).checkpoints).state).toBe("returned");
  });

  test("4 → not_found (404 problem body), 5 → timeout, 6 → backend", async () => {
    expect(await Promise.all(["1234567894", "1234567895", "1234567896"].map(kind))).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("7: manifested, no scans → pending, empty table", async () => {
    const snap = await look("1234567897");
    expect(snap.checkpoints).toEqual([]);
    expect(snap.summary?.state).toBe("pending");
  });

  test("8: cancelled", async () => {
    const snap = await look("1234567898");
    expect(newest(snap.checkpoints).state).toBe("cancelled");
    expect(snap.summary?.state).toBe("cancelled");
  });
});

describe("DHL estimated delivery (EDD)", () => {
  test("sample: estimatedTimeOfDelivery is the EDD", () => {
    expect(parseDhl(sample("dhl/unified-track.json"), "7777777770").estimatedDelivery).toBe("2018-08-03");
  });

  test("without estimatedTimeOfDelivery the time frame's end stands in; the date is taken in its own offset", () => {
    const doc = JSON.parse(sample("dhl/unified-track.json"));
    const ship = doc.shipments[0];
    delete ship.estimatedTimeOfDelivery;
    ship.estimatedDeliveryTimeFrame = {
      estimatedFrom: "2018-08-04T09:00:00-05:00",
      estimatedThrough: "2018-08-04T22:30:00-05:00",
    };
    expect(parseDhl(JSON.stringify(doc), "7777777770").estimatedDelivery).toBe("2018-08-04");
    delete ship.estimatedDeliveryTimeFrame;
    expect(parseDhl(JSON.stringify(doc), "7777777770").estimatedDelivery).toBeNull();
  });

  test("through the simulator: the estimate until delivery, then none; none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("dhl", (d) => `123456789${d}`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: null },
      returned: { state: "returned", edd: null },
    });
  });
});
