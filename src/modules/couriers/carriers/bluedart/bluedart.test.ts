import { afterAll, describe, expect, test } from "bun:test";
import { bluedartAdapter, bluedartRule, parseBluedart } from "./adapter.ts";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import { courierBySlug } from "../../catalogue.ts";
import { checkpointReason } from "../../reasons.ts";
import { FakeClock } from "../../../../lib/clock.ts";
import { captureTrack, kindOf, newest, type Seen } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

/** Runs `adapter.track` against a loopback server that records each request and answers with `respond`. */
const capture = (
  adapter: CourierAdapter,
  awb: string,
  respond: (req: Seen, i: number) => Response,
  credentials: Record<string, string>,
) => captureTrack(adapter, awb, credentials, respond, "/servlet");

const CREDS = { BLUEDART_LOGIN_ID: "BOM12345", BLUEDART_LICENSE_KEY: "lic-key-123" };

describe("Blue Dart sample (bluedart/tnt.xml, real, 2012)", () => {
  const snap = parseBluedart(sample("bluedart/tnt.xml"), "44330038841");

  test("9 scans, newest delivered at 07-Jun-2012 13:05 IST", () => {
    expect(snap.checkpoints).toHaveLength(9);
    const n = newest(snap.checkpoints);
    expect(n.state).toBe("delivered");
    expect([n.localDate, n.localTime]).toEqual(["2012-06-07", "13:05"]);
    expect(n.at).toBe("2012-06-07T07:35:00.000Z");
    expect(n.location).toBe("SRINAGAR");
    expect([n.rawCode, n.rawStatus]).toEqual(["DL", "Shipment delivered"]);
  });

  test("Shipment Outscan is out for delivery; OUTSCANNED TO NETWORK is a hub dispatch", () => {
    expect(snap.checkpoints.find((c) => c.rawStatus === "Shipment Outscan")?.state).toBe("out_for_delivery");
    const network = snap.checkpoints.filter((c) => c.rawStatus === "SHIPMENT OUTSCANNED TO NETWORK");
    expect(network).toHaveLength(3);
    expect(network.every((c) => c.state === "in_transit")).toBe(true);
    expect(snap.checkpoints.filter((c) => c.state === "in_transit")).toHaveLength(7);
  });

  test("summary, cities, no remark, no POD", () => {
    expect(snap.summary).toMatchObject({
      state: "delivered",
      rawCode: "DL",
      rawStatus: "Shipment delivered",
      at: "2012-06-07T07:35:00.000Z",
    });
    expect([snap.originCity, snap.destinationCity]).toEqual(["NAVIMUMBAI", "SRINAGAR"]);
    expect(snap.remark).toBeNull();
    expect(snap.podUrl).toBeNull();
  });

  test("the same document answers another waybill as not found when it lists several", () => {
    const two = sample("bluedart/tnt.xml").replace(
      "</ShipmentData>",
      '<Shipment WaybillNo="1"><Status>x</Status></Shipment></ShipmentData>',
    );
    expect(kindOf(() => parseBluedart(two, "99999999999"))).toBe("not_found");
  });
});

describe("Blue Dart errors and mapping", () => {
  test.each([
    [
      '<ShipmentData><Shipment WaybillNo="50112345674"><Status>Incorrect Waybill number or No Information</Status><StatusType>NF</StatusType></Shipment></ShipmentData>',
      "not_found",
    ],
    ["<ShipmentData><Error>Incorrect waybill number or No information</Error></ShipmentData>", "not_found"],
    ["<ShipmentData><Error>License Mismatch</Error></ShipmentData>", "auth"],
    ["<ShipmentData><Error>Server busy</Error></ShipmentData>", "backend"],
    ["<html><body>502 Bad Gateway</body></html>", "backend"],
    ["", "backend"],
    ["<ShipmentData><Shipment", "backend"],
    ['<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><ShipmentData>&lol;</ShipmentData>', "backend"],
    ['{"ShipmentData": []}', "backend"],
  ])("%p → %p", (body, kind) => {
    expect(kindOf(() => parseBluedart(body, "50112345674"))).toBe(kind);
  });

  test.each([
    ["UD", "Shipment Outscan", "out_for_delivery", null],
    ["UD", "SHIPMENT OUTSCANNED TO NETWORK", "in_transit", null],
    ["UD", "Online Shipment Booked", "pending", "info_received"],
    ["PU", "Shipment Picked Up", "in_transit", "picked_up"],
    ["UD", "CONSIGNEE NOT AVAILABLE", "exception", "delivery_attempt_failed"],
    ["RT", "RTO - RETURN TO ORIGIN INITIATED", "exception", "rto_in_transit"],
    ["RT", "SHIPMENT RETURNED TO SHIPPER", "returned", "rto_delivered"],
    ["UD", "SHIPMENT CANCELLED BY SHIPPER", "cancelled", null],
    ["UD", "SHIPMENT LOST", "exception", "lost"],
    ["DL", "Shipment delivered", "delivered", null],
    ["UD", "SOMETHING NEW AND UNKNOWN", "in_transit", null],
    ["ZZ", "", "in_transit", null],
  ])("%s + %p → %s/%s (never delivered by default)", (type, text, state, subStatus) => {
    const r = bluedartRule(type, text);
    expect([r.state as string, (r.sub ?? null) as string | null]).toEqual([state, subStatus]);
  });

  test("an exception scan carries its text as the remark", () => {
    const xml = `<ShipmentData><Shipment WaybillNo="50112345673"><Status>CONSIGNEE NOT AVAILABLE</Status><StatusType>UD</StatusType><Scans><ScanDetail><Scan>CONSIGNEE NOT AVAILABLE</Scan><ScanType>UD</ScanType><ScanDate>05-Nov-2026</ScanDate><ScanTime>10:20</ScanTime><ScannedLocation>PUNE</ScannedLocation></ScanDetail></Scans></Shipment></ShipmentData>`;
    const snap = parseBluedart(xml, "50112345673");
    expect(snap.checkpoints).toHaveLength(1);
    expect(snap.remark).toBe("CONSIGNEE NOT AVAILABLE");
    expect(snap.checkpoints[0]?.at).toBe("2026-11-05T04:50:00.000Z");
  });
});

describe("Blue Dart failed attempts (README.md, Failed attempts)", () => {
  const scan = (text: string, code = "", group = "") =>
    `<ShipmentData><Shipment WaybillNo="50112345673"><Status>${text}</Status><StatusType>UD</StatusType><Scans><ScanDetail><Scan>${text}</Scan>${code ? `<ScanCode>${code}</ScanCode>` : ""}${group ? `<ScanGroupType>${group}</ScanGroupType>` : ""}<ScanType>UD</ScanType><ScanDate>05-Nov-2026</ScanDate><ScanTime>10:20</ScanTime><ScannedLocation>PUNE</ScannedLocation></ScanDetail></Scans></Shipment></ShipmentData>`;
  const only = (xml: string) => present(parseBluedart(xml, "50112345673").checkpoints[0]);

  test.each([
    ["003", "customer_unavailable"],
    ["011", "customer_refused"],
    ["008", "address_issue"],
    ["044", "cod_not_ready"],
    ["001", "rescheduled_by_customer"],
    ["002", "out_of_delivery_area"],
  ])("ScanCode %s of group T is a failed attempt with its reason, whatever the wording", (code, reason) => {
    const c = only(scan("SHIPMENT HELD FOR CUSTOMER INSTRUCTION", code, "T"));
    expect([c.state, c.subStatus, c.rawCode]).toEqual(["exception", "delivery_attempt_failed", `${code}-T`]);
    expect(checkpointReason("bluedart", c) as string).toBe(reason);
  });

  test("the same number in group S is another scan: no failed attempt; a code without its group is not read", () => {
    expect(only(scan("SHIPMENT FURTHER CONNECTED", "001", "S")).state).toBe("in_transit");
    expect(only(scan("SHIPMENT FURTHER CONNECTED", "003")).state).toBe("in_transit");
  });

  test.each([
    ["CONSIGNEE REFUSED TO ACCEPT", "customer_refused"],
    ["INCOMPLETE ADDRESS, HOUSE NOT FOUND", "address_issue"],
    ["COD AMOUNT NOT READY", "cod_not_ready"],
    ["CONSIGNEE ASKED TO RESCHEDULE DELIVERY", "rescheduled_by_customer"],
    ["OFFICE CLOSED", "premises_closed"],
    ["OUT OF DELIVERY AREA", "out_of_delivery_area"],
    ["HEAVY RAIN, DELIVERY NOT POSSIBLE", "weather_or_disaster"],
  ])("a UD scan without a code worded %p is a failed attempt (%s)", (text, reason) => {
    const c = only(scan(text));
    expect([c.state, c.subStatus]).toEqual(["exception", "delivery_attempt_failed"]);
    expect(checkpointReason("bluedart", c) as string).toBe(reason);
    expect(parseBluedart(scan(text), "50112345673").summary?.state).toBe("exception");
  });
});

describe("Blue Dart request (as documented: RoutingServlet custawbquery)", () => {
  test("GET /RoutingServlet with handler, action, loginid, awb=awb, numbers, format=xml, lickey, verno=1.3, scan=1", async () => {
    const { seen, result } = await capture(
      bluedartAdapter,
      "44330038841",
      () => new Response(sample("bluedart/tnt.xml"), { headers: { "content-type": "text/xml" } }),
      CREDS,
    );
    expect(seen).toHaveLength(1);
    const r = present(seen[0]);
    expect(r.method).toBe("GET");
    expect(r.path).toBe("/servlet/RoutingServlet");
    expect(Object.fromEntries(r.query)).toEqual({
      handler: "tnt",
      action: "custawbquery",
      loginid: "BOM12345",
      awb: "awb",
      numbers: "44330038841",
      format: "xml",
      lickey: "lic-key-123",
      verno: "1.3",
      scan: "1",
    });
    expect(r.body).toBe("");
    expect((result as { checkpoints: unknown[] }).checkpoints).toHaveLength(9);
    expect(bluedartAdapter.defaultBaseUrl).toBe("https://api.bluedart.com/servlet");
    expect(bluedartAdapter.credentialVars).toEqual(["BLUEDART_LOGIN_ID", "BLUEDART_LICENSE_KEY"]);
  });

  test.each([
    [401, "text/plain", "Unauthorized", "auth"],
    [403, "text/html", "<html>Forbidden</html>", "rate_limited"],
    [429, "text/plain", "Too Many Requests", "rate_limited"],
    [500, "text/html", "<html>error</html>", "backend"],
    [503, "text/html", "<html>down</html>", "backend"],
    [404, "text/html", "<html>no servlet</html>", "backend"],
    [200, "text/html", "<html><body>Maintenance</body></html>", "backend"],
    [200, "application/json", '{"ok":true}', "backend"],
  ])("HTTP %i %s → %s", async (status, type, body, kind) => {
    const { result } = await capture(
      bluedartAdapter,
      "50112345670",
      () => new Response(body, { status, headers: { "content-type": type } }),
      CREDS,
    );
    expect(result).toBeInstanceOf(CourierError);
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });
});

describe("Blue Dart through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const bluedart = present(courierBySlug("bluedart"));
  const lookup = (awb: string) => sb.backends.lookup(bluedart, awb).then((r) => r.snapshot);
  const fail = (awb: string) =>
    sb.backends.lookup(bluedart, awb).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("digit 0: delivered, full history of 7 scans", async () => {
    const s = await lookup("50112345670");
    expect(s.checkpoints).toHaveLength(7);
    expect(newest(s.checkpoints).state).toBe("delivered");
    expect(s.summary?.state).toBe("delivered");
    expect(s.checkpoints.map((c) => c.state)).toEqual([
      "delivered",
      "out_for_delivery",
      "in_transit",
      "in_transit",
      "in_transit",
      "in_transit",
      "pending",
    ]);
  });

  test("digit 1: in transit, one more checkpoint per step until delivered", async () => {
    const awb = "50112345671";
    const states: string[] = [];
    const counts: number[] = [];
    for (let step = 0; step <= 4; step++) {
      const s = await lookup(awb);
      states.push(newest(s.checkpoints).state);
      counts.push(s.checkpoints.length);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["in_transit", "in_transit", "in_transit", "out_for_delivery", "delivered"]);
    expect(counts).toEqual([3, 4, 5, 6, 7]);
  });

  test("digit 2: out for delivery, next step delivered", async () => {
    const awb = "50112345682";
    expect(newest((await lookup(awb)).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await lookup(awb)).checkpoints).state).toBe("delivered");
  });

  test("digit 3: failed attempt with remark, then return to origin, then returned", async () => {
    const awb = "50112345693";
    const s0 = await lookup(awb);
    expect(newest(s0.checkpoints)).toMatchObject({ state: "exception", subStatus: "delivery_attempt_failed" });
    expect(s0.remark).toBe("CONSIGNEE NOT AVAILABLE");
    expect(newest(s0.checkpoints).rawCode).toBe("003-T");
    clock.advance(3_600_000);
    expect(newest((await lookup(awb)).checkpoints)).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    clock.advance(3_600_000);
    expect(newest((await lookup(awb)).checkpoints)).toMatchObject({ state: "returned", subStatus: "rto_delivered" });
  });

  test("digit 4 → not_found; 5 → timeout; 6 → backend", async () => {
    expect([await fail("50112345674"), await fail("50112345675"), await fail("50112345676")]).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("digit 7: manifested, no scans → pending summary, empty history", async () => {
    const s = await lookup("50112345677");
    expect(s.checkpoints).toEqual([]);
    expect(s.summary).toMatchObject({ state: "pending", subStatus: "info_received" });
  });

  test("digit 8: cancelled", async () => {
    const s = await lookup("50112345678");
    expect(newest(s.checkpoints).state).toBe("cancelled");
    expect(s.summary?.state).toBe("cancelled");
  });

  test("wrong licence key → the twin's License Mismatch → auth", async () => {
    const res = await fetch(
      `${sb.sim.baseUrlFor("bluedart")}/RoutingServlet?handler=tnt&action=custawbquery&loginid=${sandboxCredential("BLUEDART_LOGIN_ID")}&awb=awb&numbers=50112345670&format=xml&lickey=wrong&verno=1.3&scan=1`,
    );
    const text = await res.text();
    expect(kindOf(() => parseBluedart(text, "50112345670"))).toBe("auth");
  });
});

describe("Blue Dart estimated delivery (EDD)", () => {
  test("sample: the real delivered answer carries no ExpectedDeliveryDate → no EDD", () => {
    expect(parseBluedart(sample("bluedart/tnt.xml"), "44330038841").estimatedDelivery ?? null).toBeNull();
  });

  test.each([
    ["09 June 2012", "2012-06-09"],
    ["09-Jun-2012", "2012-06-09"],
    ["2012-06-09T00:00:00", "2012-06-09"],
    ["", null],
    ["01 January 1900", null],
  ])("ExpectedDeliveryDate %p (same formats as StatusDate) → %p", (written, edd) => {
    const xml = sample("bluedart/tnt.xml").replace(
      /<Scans>/,
      `<ExpectedDeliveryDate>${written}</ExpectedDeliveryDate><Scans>`,
    );
    expect(xml).toContain("<ExpectedDeliveryDate>");
    expect(parseBluedart(xml, "44330038841").estimatedDelivery ?? null).toBe(edd);
  });

  test("through the simulator: ExpectedDeliveryDate until delivery, then none; none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("bluedart", (d) => `5011234567${d}`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: null },
      returned: { state: "returned", edd: null },
    });
  });
});
