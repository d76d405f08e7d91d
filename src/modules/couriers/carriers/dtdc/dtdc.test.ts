import { afterAll, describe, expect, test } from "bun:test";
import { clearDtdcTokens, dtdcAdapter, dtdcRule, parseDtdc } from "./adapter.ts";
import type { CourierError } from "../../adapters/types.ts";
import type { TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { courierBySlug } from "../../catalogue.ts";
import { FakeClock } from "../../../../lib/clock.ts";
import { captureTrack, kindOf, newest, type Seen } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

/** Runs `dtdcAdapter.track` against a loopback server that records each request and answers with `respond`. */
const capture = (awb: string, respond: (req: Seen, i: number) => Response) => {
  clearDtdcTokens();
  return captureTrack(
    dtdcAdapter,
    awb,
    { DTDC_USERNAME: "shop_user", DTDC_PASSWORD: "p@ss word" },
    respond,
    "/dtdc-api",
  );
};

const UNAUTHORIZED = () =>
  new Response(sample("dtdc/jsoncntrk-error-401.json"), {
    status: 401,
    headers: { "content-type": "application/json" },
  });
const token = (t: string) => new Response(t, { headers: { "content-type": "text/plain" } });
const ok = () => new Response(sample("dtdc/jsoncntrk.json"), { headers: { "content-type": "application/json" } });

describe("DTDC samples", () => {
  test("dtdc/jsoncntrk.json (doc example): 11 events, newest delivered 21-06-2017 16:14 IST", () => {
    const snap = parseDtdc(sample("dtdc/jsoncntrk.json"), "B32242001");
    expect(snap.checkpoints).toHaveLength(11);
    const n = newest(snap.checkpoints);
    expect(n).toMatchObject({
      state: "delivered",
      localDate: "2017-06-21",
      localTime: "16:14",
      at: "2017-06-21T10:44:00.000Z",
      rawCode: "DLV",
      rawStatus: "Delivered",
      location: "MUMBAI APEX",
    });
    expect(present(snap.checkpoints.find((c) => c.rawCode === "BKD"))).toMatchObject({
      state: "pending",
      subStatus: "info_received",
    });
    expect(snap.checkpoints.find((c) => c.rawCode === "OUTDLV")?.state).toBe("out_for_delivery");
    expect(snap.checkpoints.filter((c) => c.state === "in_transit")).toHaveLength(8);
    expect(snap.summary).toMatchObject({ state: "delivered", rawStatus: "Delivered", at: "2017-06-21T10:44:00.000Z" });
    expect([snap.originCity, snap.destinationCity, snap.podUrl, snap.remark, snap.rtoNumber]).toEqual([
      "BANGALORE",
      "MUMBAI",
      null,
      null,
      null,
    ]);
  });

  test("dtdc/jsoncntrk-error-401.json → auth", () => {
    expect(kindOf(() => parseDtdc(sample("dtdc/jsoncntrk-error-401.json"), "B32242001"))).toBe("auth");
  });

  test.each([
    [
      '{"statusCode":200,"statusFlag":false,"status":"FAILED","errorDetails":"NO DATA FOUND FOR THIS CNNO NUMBER"}',
      "not_found",
    ],
    [
      '{"statusCode":200,"statusFlag":false,"status":"FAILED","errorDetails":[{"name":"strError","value":"Invalid token"}]}',
      "auth",
    ],
    ['{"statusCode":200,"statusFlag":true,"trackHeader":null}', "backend"],
    ['{"statusCode":200,"statusFlag":"yes"}', "backend"],
    ["<html>502 Bad Gateway</html>", "backend"],
    ['{"statusFlag":true,"trackHeader":{', "backend"],
    ["", "backend"],
    ["[]", "backend"],
  ])("%p → %p", (body, kind) => {
    expect(kindOf(() => parseDtdc(body, "D12345670"))).toBe(kind);
  });

  test("hostile details: wrong types are skipped, never a crash; an event without code or text is in transit", () => {
    const snap = parseDtdc(
      JSON.stringify({
        statusFlag: true,
        trackHeader: { strStatus: 7 },
        trackDetails: [null, 5, { strActionDate: 21062017 }, { strCode: "DLV", strActionDate: "bad" }],
      }),
      "x",
    );
    expect(snap.checkpoints).toHaveLength(1);
    expect(snap.checkpoints[0]).toMatchObject({
      state: "in_transit",
      localDate: "2017-06-21",
      localTime: "00:00",
      rawCode: null,
    });
  });

  test("non-empty strRtoNumber is reported; the shipment is a return on its way until delivered back", () => {
    const doc = JSON.parse(sample("dtdc/jsoncntrk.json"));
    doc.trackHeader.strRtoNumber = "R32242001";
    doc.trackHeader.strStatus = "RTO In Transit";
    doc.trackDetails.push({
      strCode: "RTO",
      strAction: "RTO In Transit",
      strOrigin: "MUMBAI APEX",
      strActionDate: "22062017",
      strActionTime: "0900",
      sTrRemarks: "Consignee refused",
    });
    let snap = parseDtdc(JSON.stringify(doc), "B32242001");
    expect(snap.rtoNumber).toBe("R32242001");
    expect(snap.summary).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    expect(newest(snap.checkpoints)).toMatchObject({
      state: "exception",
      subStatus: "rto_in_transit",
      remark: "Consignee refused",
    });
    doc.trackHeader.strStatus = "RTO Delivered";
    snap = parseDtdc(JSON.stringify(doc), "B32242001");
    expect(snap.summary).toMatchObject({ state: "returned", subStatus: "rto_delivered" });
  });

  test.each([
    ["BKD", "Booked", "pending"],
    ["OBMD", "In Transit", "in_transit"],
    ["CDIN", "In Transit", "in_transit"],
    ["OUTDLV", "Out For Delivery", "out_for_delivery"],
    ["DLV", "Delivered", "delivered"],
    ["NONDLV", "Not Delivered", "exception"],
    ["RTO", "RTO In Transit", "exception"],
    ["RTODLV", "RTO Delivered", "returned"],
    ["", "Not Delivered", "exception"],
    ["CAN", "Cancelled", "cancelled"],
    ["XYZ", "Something new", "in_transit"],
    ["XYZ", "", "in_transit"],
  ])("strCode %p / %p → %s", (code, text, state) => {
    expect(dtdcRule(code, text).state).toBe(state as never);
  });
});

describe("DTDC requests (as documented: authenticate, then getTrackDetails with X-Access-Token)", () => {
  test("GET authenticate?username&password, then POST getTrackDetails with the token and the documented body", async () => {
    const { seen, result } = await capture("B32242001", (r) =>
      r.path.endsWith("/authenticate") ? token("tok-1") : ok(),
    );
    expect(seen).toHaveLength(2);
    const [auth, track] = seen as [Seen, Seen];
    expect(auth.method).toBe("GET");
    expect(auth.path).toBe("/dtdc-api/api/dtdc/authenticate");
    expect(Object.fromEntries(auth.query)).toEqual({ username: "shop_user", password: "p@ss word" });
    expect(track.method).toBe("POST");
    expect(track.path).toBe("/dtdc-api/rest/JSONCnTrk/getTrackDetails");
    expect(track.headers.get("x-access-token")).toBe("tok-1");
    expect(track.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(track.body)).toEqual({ trkType: "cnno", strcnno: "B32242001", addtnlDtl: "Y" });
    expect((result as TrackingSnapshot).checkpoints).toHaveLength(11);
    expect(dtdcAdapter.defaultBaseUrl).toBe("https://blktracksvc.dtdc.com/dtdc-api");
    expect(dtdcAdapter.credentialVars).toEqual(["DTDC_USERNAME", "DTDC_PASSWORD"]);
  });

  test("a 401 on tracking → exactly one refresh, then success with the new token", async () => {
    let n = 0;
    const { seen, result } = await capture("B32242001", (r) =>
      r.path.endsWith("/authenticate")
        ? token(`tok-${++n}`)
        : r.headers.get("x-access-token") === "tok-1"
          ? UNAUTHORIZED()
          : ok(),
    );
    expect(seen.map((s) => s.path.split("/").pop())).toEqual([
      "authenticate",
      "getTrackDetails",
      "authenticate",
      "getTrackDetails",
    ]);
    expect(seen[3]?.headers.get("x-access-token")).toBe("tok-2");
    expect((result as TrackingSnapshot).checkpoints).toHaveLength(11);
  });

  test("a 401 after the refresh → auth, no third token request", async () => {
    const { seen, result } = await capture("B32242001", (r) =>
      r.path.endsWith("/authenticate") ? token("tok") : UNAUTHORIZED(),
    );
    expect(seen).toHaveLength(4);
    expect((result as CourierError).kind).toBe("auth");
  });

  test.each([
    [401, '{"status":401,"error":"Unauthorized"}', "auth"],
    [200, '{"message":"Invalid credentials"}', "auth"],
    [200, "<html>login page</html>", "backend"],
    [200, "", "backend"],
    [429, "slow down", "rate_limited"],
    [403, "forbidden", "rate_limited"],
    [502, "<html>bad gateway</html>", "backend"],
  ])("authenticate answering HTTP %i %p → %s", async (status, body, kind) => {
    const { seen, result } = await capture("B32242001", () => new Response(body, { status }));
    expect(seen).toHaveLength(1);
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });

  test.each([
    [429, "rate_limited"],
    [403, "rate_limited"],
    [500, "backend"],
    [504, "timeout"],
  ])("tracking answering HTTP %i → %s", async (status, kind) => {
    const { result } = await capture("B32242001", (r) =>
      r.path.endsWith("/authenticate") ? token("t") : new Response("x", { status }),
    );
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });
});

describe("DTDC through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const dtdc = present(courierBySlug("dtdc"));
  const lookup = (awb: string) => sb.backends.lookup(dtdc, awb).then((r) => r.snapshot);
  const fail = (awb: string) =>
    sb.backends.lookup(dtdc, awb).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("token caching: 100 parallel lookups of different numbers → one token request", async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => lookup(`D${String(10_000_000 + i * 10).padStart(8, "0")}`)),
    );
    expect(results.every((s) => newest(s.checkpoints).state === "delivered")).toBe(true);
    expect(sb.sim.calls("dtdc-token", "*")).toBe(1);
  });

  test("an expired token (25 h later) → one refresh for 100 parallel lookups", async () => {
    clock.advance(25 * 3_600_000);
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => lookup(`D${String(20_000_000 + i * 10).padStart(8, "0")}`)),
    );
    expect(sb.sim.calls("dtdc-token", "*")).toBe(2);
  });

  test("a token the courier forgot (refused) → exactly one refresh", async () => {
    sb.sim.reset();
    const s = await lookup("D30000000");
    expect(newest(s.checkpoints).state).toBe("delivered");
    expect(sb.sim.calls("dtdc-token", "*")).toBe(1);
    expect(sb.sim.calls("dtdc", "D30000000")).toBe(1);
  });

  test("digit 0: delivered, full history", async () => {
    const s = await lookup("D12345670");
    expect(s.checkpoints).toHaveLength(7);
    expect(newest(s.checkpoints)).toMatchObject({ state: "delivered", rawCode: "DLV" });
    expect(s.summary?.state).toBe("delivered");
  });

  test("digit 1: advances one checkpoint per step until delivered", async () => {
    const states: string[] = [];
    for (let step = 0; step <= 4; step++) {
      const s = await lookup("D12345671");
      states.push(`${newest(s.checkpoints).state}:${s.checkpoints.length}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["in_transit:3", "in_transit:4", "in_transit:5", "out_for_delivery:6", "delivered:7"]);
  });

  test("digit 2: out for delivery, next step delivered", async () => {
    expect(newest((await lookup("D12345682")).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await lookup("D12345682")).checkpoints).state).toBe("delivered");
  });

  test("digit 3: NONDLV with remark, then RTO (number reported), then returned", async () => {
    const s0 = await lookup("D12345693");
    expect(newest(s0.checkpoints)).toMatchObject({
      state: "exception",
      subStatus: "delivery_attempt_failed",
      rawCode: "NONDLV",
    });
    expect(s0.remark).toBe("Consignee not available");
    expect(s0.rtoNumber).toBeNull();
    clock.advance(3_600_000);
    const s1 = await lookup("D12345693");
    expect(newest(s1.checkpoints)).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    expect(s1.rtoNumber).toBe("R12345693");
    expect(s1.summary).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    clock.advance(3_600_000);
    const s2 = await lookup("D12345693");
    expect(newest(s2.checkpoints)).toMatchObject({ state: "returned", subStatus: "rto_delivered" });
    expect(s2.summary?.state).toBe("returned");
  });

  test("digit 4 → not_found; 5 → timeout; 6 → backend", async () => {
    expect([await fail("D12345674"), await fail("D12345675"), await fail("D12345676")]).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("digit 7: booked, no scans → pending", async () => {
    const s = await lookup("D12345677");
    expect(s.checkpoints).toEqual([]);
    expect(s.summary).toMatchObject({ state: "pending", subStatus: "info_received" });
  });

  test("digit 8: cancelled", async () => {
    const s = await lookup("D12345678");
    expect(newest(s.checkpoints).state).toBe("cancelled");
    expect(s.summary?.state).toBe("cancelled");
  });
});
