import { afterAll, describe, expect, test } from "bun:test";
import { XMLParser } from "fast-xml-parser";
import { FakeClock } from "../../../../lib/clock.ts";
import { ARAMEX_SOAP_ACTION, aramexAdapter, aramexRequestBody, aramexRule, parseAramex } from "./adapter.ts";
import { checkWire, parseXml } from "../../adapters/kit.ts";
import { AramexDocument } from "./wire.ts";
import { CourierError } from "../../adapters/types.ts";
import { courierBySlug } from "../../catalogue.ts";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import { courierLoopback, kindOf, newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

const aramex = present(courierBySlug("aramex"));
const CREDS = {
  ARAMEX_USERNAME: "testingapi@aramex.com",
  ARAMEX_PASSWORD: "p<&>ss",
  ARAMEX_ACCOUNT_NUMBER: "20016",
  ARAMEX_ACCOUNT_PIN: "331421",
  ARAMEX_ACCOUNT_ENTITY: "AMM",
  ARAMEX_ACCOUNT_COUNTRY_CODE: "JO",
};

const SOAP = "http://schemas.xmlsoap.org/soap/envelope/";
const ARRAYS = "http://schemas.microsoft.com/2003/10/Serialization/Arrays";

const loopback = (reply: () => Response) => courierLoopback("aramex", CREDS, () => reply(), "/base");

describe("Aramex samples", () => {
  test("aramex/track-soap.xml: one SH001 update → in transit (reached destination), naive time kept", () => {
    const snap = parseAramex(sample("aramex/track-soap.xml"), "123456");
    expect(snap.checkpoints).toHaveLength(1);
    const n = newest(snap.checkpoints);
    expect([n.state, n.subStatus, n.rawCode]).toEqual(["in_transit", "reached_destination", "SH001"]);
    expect([n.localDate, n.localTime, n.at]).toEqual(["2016-05-31", "16:00", "2016-05-31T16:00:00.000Z"]);
    expect(n.location).toBe("JOHANNESBURG, South Africa");
    expect(n.activity).toBe("Shipment received at destination warehouse");
    expect(snap.remark).toBeNull();
    expect(snap.podUrl).toBeNull();
  });

  test("aramex/track-soap-nonexistent.xml → not_found", () => {
    expect(kindOf(() => parseAramex(sample("aramex/track-soap-nonexistent.xml"), "1Z12345E6205277936"))).toBe(
      "not_found",
    );
  });

  test("aramex/track-soap-error.xml (HasErrors + ERR01) → auth", () => {
    expect(kindOf(() => parseAramex(sample("aramex/track-soap-error.xml"), "123456"))).toBe("auth");
  });

  test("other notifications → backend; SOAP fault → backend", () => {
    const other = sample("aramex/track-soap-error.xml")
      .replace("ERR01", "ERR99")
      .replace("ClientInfo - Invalid username or password", "Internal error");
    expect(kindOf(() => parseAramex(other, "123456"))).toBe("backend");
    const fault = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>bad</faultstring></s:Fault></s:Body></s:Envelope>`;
    expect(kindOf(() => parseAramex(fault, "123456"))).toBe("backend");
  });

  test("catalogue pattern accepts the sample waybill", () => {
    expect(aramex.awb.pattern.test("123456")).toBe(true);
    expect(aramex.awb.pattern.test(aramex.awb.example)).toBe(true);
  });

  test("mapping: SH001, description keywords, ProblemCode → exception with its comments", () => {
    const st = (code: string, text: string, problem = "", comments = "") => {
      const r = aramexRule(code, text, problem, comments);
      return r.sub ? `${r.state}/${r.sub}` : r.state;
    };
    expect(st("SH001", "Shipment received at destination warehouse")).toBe("in_transit/reached_destination");
    expect(st("SH014", "Record created.")).toBe("pending/info_received");
    expect(st("SH003", "Out for Delivery")).toBe("out_for_delivery");
    expect(st("SH005", "Delivered")).toBe("delivered");
    expect(st("SH069", "Return to Shipper initiated")).toBe("exception/rto_initiated");
    expect(st("SH234", "Returned to Shipper")).toBe("returned/rto_delivered");
    expect(st("SH203", "Shipment Cancelled")).toBe("cancelled");
    expect(st("SH033", "Attempted Delivery", "A07", "Consignee not available")).toBe(
      "exception/delivery_attempt_failed",
    );
    expect(st("SH999", "Something else", "X1")).toBe("exception");
    expect(st("SH999", "Something else")).toBe("in_transit");
  });

  test("XML with a DOCTYPE (XXE / billion laughs) is refused", () => {
    const evil = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>&lol2;</s:Body></s:Envelope>`;
    expect(kindOf(() => parseAramex(evil, "123456"))).toBe("backend");
  });

  test.each([
    "",
    "<html><body>Service Unavailable</body></html>",
    '{"json":true}',
    "<s:Envelope><s:Body><ShipmentTrackingResponse><HasErrors>false",
    "<a><b></a>",
  ])("hostile body %p → backend error or empty history, never a crash", (body) => {
    try {
      expect(parseAramex(body, "1").checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
      expect((e as CourierError).kind).toBe("backend");
    }
  });

  // Well-formed XML of another shape: the wire schema (wire/aramex.ts) refuses it as a backend error.
  const soap = (inner: string) => `<s:Envelope xmlns:s="${SOAP}"><s:Body>${inner}</s:Body></s:Envelope>`;
  const response = (inner: string) =>
    soap(`<ShipmentTrackingResponse xmlns="http://ws.aramex.net/ShippingAPI/v1/">${inner}</ShipmentTrackingResponse>`);
  const pair = (value: string) =>
    `<TrackingResults xmlns:a="${ARRAYS}"><a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY><a:Key>1</a:Key><a:Value>${value}</a:Value></a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY></TrackingResults>`;
  test.each([
    ["no Body", `<s:Envelope xmlns:s="${SOAP}"/>`],
    ["empty Body", soap("")],
    ["empty ShipmentTrackingResponse", response("")],
    [
      "two ShipmentTrackingResponses",
      soap(
        "<ShipmentTrackingResponse><HasErrors>false</HasErrors></ShipmentTrackingResponse><ShipmentTrackingResponse/>",
      ),
    ],
    ["HasErrors twice", response("<HasErrors>false</HasErrors><HasErrors>true</HasErrors>")],
    ["Notifications as text", response("<Notifications>ERR01</Notifications><HasErrors>true</HasErrors>")],
    [
      "NonExistingWaybills as text",
      response("<HasErrors>false</HasErrors><NonExistingWaybills>1</NonExistingWaybills>"),
    ],
    ["TrackingResults as text", response("<HasErrors>false</HasErrors><TrackingResults>1</TrackingResults>")],
    [
      "a dictionary entry as text",
      response(
        `<HasErrors>false</HasErrors><TrackingResults xmlns:a="${ARRAYS}"><a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY>1</a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY></TrackingResults>`,
      ),
    ],
    ["Value as text", response(`<HasErrors>false</HasErrors>${pair("x")}`)],
    ["an empty TrackingResult", response(`<HasErrors>false</HasErrors>${pair("<TrackingResult/>")}`)],
    [
      "UpdateDateTime twice",
      response(
        `<HasErrors>false</HasErrors>${pair("<TrackingResult><UpdateDateTime>2016-05-31T16:00:00</UpdateDateTime><UpdateDateTime>2016-05-31T17:00:00</UpdateDateTime></TrackingResult>")}`,
      ),
    ],
    ["an empty SOAP fault", soap("<s:Fault/>")],
  ])("%s → backend", (_what, body) => {
    expect(kindOf(() => parseAramex(body, "1"))).toBe("backend");
  });

  test("elements the adapter does not read, and text where only text is read, are accepted", () => {
    const body = response(
      `<Transaction/><Extra><x>1</x></Extra><HasErrors>false</HasErrors>${pair("<TrackingResult><UpdateCode>SH001</UpdateCode><UpdateDateTime>2016-05-31T16:00:00</UpdateDateTime><UpdateLocation><City>X</City></UpdateLocation><Unknown>1</Unknown></TrackingResult>")}`,
    );
    const snap = parseAramex(body, "1");
    expect(snap.checkpoints.map((c) => [c.rawCode, c.location, c.at])).toEqual([
      ["SH001", "", "2016-05-31T16:00:00.000Z"],
    ]);
  });
});

describe("Aramex request (loopback)", () => {
  test("POST SOAP TrackShipments with ClientInfo as in aramex/track-soap-request.xml, values escaped", async () => {
    const lb = loopback(
      () => new Response(sample("aramex/track-soap.xml"), { headers: { "content-type": "text/xml; charset=utf-8" } }),
    );
    try {
      const snap = await aramexAdapter.track("123456", lb.ctx);
      expect(snap.checkpoints).toHaveLength(1);
      const r = present(lb.seen[0]);
      expect([r.method, r.path]).toEqual(["POST", "/base/ShippingAPI.V2/Tracking/Service_1_0.svc"]);
      expect(r.headers.get("content-type")).toBe("text/xml; charset=utf-8");
      expect(r.headers.get("soapaction")).toBe(ARAMEX_SOAP_ACTION);
      const parse = (x: string) =>
        new XMLParser({ removeNSPrefix: true, parseTagValue: false }).parse(x).Envelope.Body.ShipmentTrackingRequest;
      const sent = parse(r.body);
      // The documented request (its unterminated xmlns:arr quote repaired), with our values in place.
      const documented = parse(sample("aramex/track-soap-request.xml").replace("Arrays>", 'Arrays">'));
      expect(Object.keys(sent)).toEqual(Object.keys(documented));
      expect(Object.keys(sent.ClientInfo)).toEqual(Object.keys(documented.ClientInfo));
      expect(sent.ClientInfo).toEqual({
        UserName: "testingapi@aramex.com",
        Password: "p<&>ss",
        Version: "1.0",
        AccountNumber: "20016",
        AccountPin: "331421",
        AccountEntity: "AMM",
        AccountCountryCode: "JO",
      });
      expect(r.body).toContain("<v1:Password>p&lt;&amp;&gt;ss</v1:Password>");
      expect(sent.Shipments).toEqual({ string: "123456" });
      expect(sent.GetLastTrackingUpdateOnly).toBe("false");
    } finally {
      await lb.close();
    }
  });

  test.each([
    [401, "Unauthorized", "auth"],
    [403, "Forbidden", "rate_limited"],
    [429, "slow down", "rate_limited"],
    [500, "<s:Envelope><s:Body><s:Fault/></s:Body></s:Envelope>", "backend"],
    [200, "<html>maintenance</html>", "backend"],
  ])("HTTP %d %p → %s", async (status, body, kind) => {
    const lb = loopback(() => new Response(body, { status }));
    try {
      expect(
        await aramexAdapter.track("1234567890", lb.ctx).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      ).toBe(kind);
    } finally {
      await lb.close();
    }
  });
});

describe("Aramex through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const look = (n: string) => sb.backends.lookup(aramex, n).then((r) => r.snapshot);
  const kind = (n: string) =>
    sb.backends.lookup(aramex, n).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("0: delivered, full history", async () => {
    const snap = await look("1234567890");
    expect(snap.checkpoints).toHaveLength(7);
    const n = newest(snap.checkpoints);
    expect(n.state).toBe("delivered");
    expect(snap.summary?.state).toBe("delivered");
  });

  test("1: in transit, one checkpoint per step until delivered", async () => {
    const states: string[] = [];
    for (let i = 0; i <= 4; i++) {
      const snap = await look("1234567891");
      states.push(`${snap.checkpoints.length}:${newest(snap.checkpoints).state}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["3:in_transit", "4:in_transit", "5:in_transit", "6:out_for_delivery", "7:delivered"]);
  });

  test("2: out for delivery, next step delivered", async () => {
    expect(newest((await look("1234567892")).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await look("1234567892")).checkpoints).state).toBe("delivered");
  });

  test("3: failed attempt (ProblemCode) with remark, then return initiated, then returned", async () => {
    const snap = await look("1234567893");
    const first = newest(snap.checkpoints);
    expect([first.state, first.subStatus, first.remark]).toEqual([
      "exception",
      "delivery_attempt_failed",
      "Consignee not available",
    ]);
    expect(snap.remark).toBe("Consignee not available");
    clock.advance(3_600_000);
    const second = newest((await look("1234567893")).checkpoints);
    expect([second.state, second.subStatus]).toEqual(["exception", "rto_initiated"]);
    clock.advance(3_600_000);
    expect(newest((await look("1234567893")).checkpoints).state).toBe("returned");
  });

  test("4 → not_found (NonExistingWaybills), 5 → timeout, 6 → backend", async () => {
    expect(await Promise.all(["1234567894", "1234567895", "1234567896"].map(kind))).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("7: known waybill without updates → pending, empty table", async () => {
    const snap = await look("1234567897");
    expect(snap.checkpoints).toEqual([]);
    expect(snap.summary?.state).toBe("pending");
  });

  test("8: cancelled", async () => {
    expect(newest((await look("1234567898")).checkpoints).state).toBe("cancelled");
  });

  // The twin serialises its wire-typed answer with fast-xml-parser's builder: the element names with their
  // prefixes, and every attribute (namespace declarations, i:nil) with its value, must be the real answer's.
  const skeleton = (xml: string): string[] => {
    const paths = new Set<string>();
    const walk = (path: string, v: unknown): void => {
      if (Array.isArray(v)) {
        for (const item of v) walk(path, item);
        return;
      }
      if (typeof v !== "object" || v === null) return;
      for (const [k, c] of Object.entries(v)) {
        if (k === "?xml" || k === "#text") continue;
        if (k.startsWith("@")) paths.add(`${path}/${k}=${String(c)}`);
        else {
          paths.add(`${path}/${k}`);
          walk(`${path}/${k}`, c);
        }
      }
    };
    walk(
      "",
      new XMLParser({
        ignoreAttributes: false,
        attributeNamePrefix: "@",
        removeNSPrefix: false,
        parseTagValue: false,
      }).parse(xml),
    );
    return [...paths].sort();
  };
  const twin = async (awb: string, password = sandboxCredential("ARAMEX_PASSWORD")) => {
    const creds = Object.fromEntries(aramexAdapter.credentialVars.map((v) => [v, sandboxCredential(v)]));
    const res = await fetch(`${sb.sim.baseUrlFor("aramex")}/ShippingAPI.V2/Tracking/Service_1_0.svc`, {
      method: "POST",
      headers: { "content-type": "text/xml; charset=utf-8", soapaction: ARAMEX_SOAP_ACTION },
      body: aramexRequestBody(awb, { ...creds, ARAMEX_PASSWORD: password }),
    });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/xml; charset=utf-8"]);
    return res.text();
  };

  test.each([
    ["updates", "5550000010", undefined, "aramex/track-soap.xml"],
    ["unknown waybill", "5550000014", undefined, "aramex/track-soap-nonexistent.xml"],
    ["wrong password", "5550000010", "wrong", "aramex/track-soap-error.xml"],
  ])(
    "the twin's answer (%s) has the prefixes, namespaces and elements of the real one",
    async (_what, awb, password, fixture) => {
      const text = await twin(awb, password);
      expect(skeleton(text)).toEqual(skeleton(sample(fixture)));
      expect(checkWire("aramex", AramexDocument, parseXml(text))).toBeDefined();
    },
  );
});

describe("Aramex estimated delivery (EDD)", () => {
  test("sample: TrackingResult has no estimate field → no EDD", () => {
    expect(parseAramex(sample("aramex/track-soap.xml"), "123456").estimatedDelivery ?? null).toBeNull();
  });

  test("through the simulator: never an EDD, whatever the scenario", async () => {
    const seen = await eddJourney("aramex", (d) => `123456789${d}`);
    const none = (s: { state: string }) => ({ state: s.state, edd: null });
    expect(seen).toEqual({
      inTransit: none(EDD_COMMON.inTransit),
      failedAttempt: none(EDD_COMMON.failedAttempt),
      manifested: EDD_COMMON.manifested,
      cancelled: EDD_COMMON.cancelled,
      delivered: { state: "delivered", edd: null },
      returned: { state: "returned", edd: null },
    });
  });
});
