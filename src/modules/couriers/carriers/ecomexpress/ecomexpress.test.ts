/**
 * Ecom Express has no real sample (`fixtures/SOURCE.md`): the document below
 * is built from the documented field list and order, so these tests pin the
 * parser to that documentation, not to a captured payload.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { ecomexpressAdapter, ecomRule, parseEcomExpress } from "./adapter.ts";
import type { CourierError } from "../../adapters/types.ts";
import type { TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { courierBySlug } from "../../catalogue.ts";
import { FakeClock } from "../../../../lib/clock.ts";
import { captureTrack, kindOf, newest, type Seen } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { present } from "../../../../../test/helpers/present.ts";

const F = (name: string, value: string) => `<field type="CharField" name="${name}">${value}</field>`;
const scan = (updated: string, status: string, code: string, city: string, reason = "") =>
  `<object pk="1" model="scan_stages">${F("updated_on", updated)}${F("status", status)}${F("reason_code", reason)}${F("reason_code_number", code)}${F("location", "X")}${F("location_city", city)}${F("location_type", "Service Center")}${F("city_name", city)}${F("Employee", "E")}</object>`;

/** A delivered shipment with an earlier failed attempt, in the documented field order. */
const DOC = `<?xml version="1.0" encoding="utf-8"?>
<ecomexpress-objects version="1.0">
  <object pk="1" model="awb">
    ${F("awb_number", "8012345670")}${F("orderid", "ORD1")}${F("actual_weight", "0.5")}${F("origin", "GURGAON")}${F("destination", "PUNE")}
    ${F("location_name", "PUNE")}${F("current_location_name", "PUNE")}${F("customer", "SHOP")}${F("consignee", "C")}${F("pickupdate", "01 Nov, 2026, 09:00")}
    ${F("status", "Delivered")}${F("reason_code", "")}${F("reason_code_number", "999")}${F("reason_code_description", "Delivered")}${F("receiver", "SELF")}
    ${F("expected_date", "06 Nov, 2026, 00:00")}${F("last_update_date", "05 Nov, 2026, 14:45")}${F("delivery_date", "05 Nov, 2026, 14:45")}${F("ref_awb", "None")}${F("rts_shipment", "0")}${F("system_delivery_update", "05 Nov, 2026, 14:45")}
    <field type="CharField" name="scans">
      ${scan("05 Nov, 2026, 14:45", "Delivered", "999", "PUNE")}
      ${scan("05 Nov, 2026, 09:10", "Out for delivery", "", "PUNE")}
      ${scan("04 Nov, 2026, 18:30", "Undelivered", "", "PUNE", "Consignee not available")}
      ${scan("04 Nov, 2026, 08:00", "Out for delivery", "", "PUNE")}
      ${scan("03 Nov, 2026, 20:00", "Bag scanned at DC", "", "PUNE")}
      ${scan("02 Nov, 2026, 11:00", "Shipment in-transit", "", "GURGAON")}
      ${scan("01 Nov, 2026, 17:00", "Shipment Picked Up", "", "GURGAON")}
      ${scan("01 Nov, 2026, 09:00", "Soft data uploaded", "", "GURGAON")}
    </field>
  </object>
</ecomexpress-objects>`;

const capture = (awb: string, respond: (req: Seen) => Response) =>
  captureTrack(
    ecomexpressAdapter,
    awb,
    { ECOMEXPRESS_USERNAME: "shop&co", ECOMEXPRESS_PASSWORD: "p=ss word" },
    respond,
  );

describe("Ecom Express documented format (no real sample exists)", () => {
  const snap = parseEcomExpress(DOC, "8012345670");

  test("8 scans, newest delivered 05 Nov 2026 14:45 IST via reason_code_number 999", () => {
    expect(snap.checkpoints).toHaveLength(8);
    expect(newest(snap.checkpoints)).toMatchObject({
      state: "delivered",
      localDate: "2026-11-05",
      localTime: "14:45",
      at: "2026-11-05T09:15:00.000Z",
      rawCode: "999",
      rawStatus: "Delivered",
      location: "PUNE",
    });
    expect(snap.summary).toMatchObject({ state: "delivered", rawCode: "999", at: "2026-11-05T09:15:00.000Z" });
  });

  test("each documented status text maps; the failed attempt keeps its reason as remark", () => {
    const by = (t: string) => present(snap.checkpoints.find((c) => c.rawStatus === t));
    expect(by("Soft data uploaded")).toMatchObject({ state: "pending", subStatus: "info_received" });
    expect(by("Shipment Picked Up")).toMatchObject({ state: "in_transit", subStatus: "picked_up" });
    expect(by("Shipment in-transit").state).toBe("in_transit");
    expect(by("Bag scanned at DC")).toMatchObject({ state: "in_transit", subStatus: "reached_destination" });
    expect(by("Undelivered")).toMatchObject({
      state: "exception",
      subStatus: "delivery_attempt_failed",
      remark: "Consignee not available",
    });
    expect(snap.checkpoints.filter((c) => c.state === "out_for_delivery")).toHaveLength(2);
    expect([snap.originCity, snap.destinationCity, snap.podUrl, snap.remark, snap.rtoNumber]).toEqual([
      "GURGAON",
      "PUNE",
      null,
      null,
      null,
    ]);
  });

  test("ref_awb set: reported as rtoNumber; a return on its way until it is back", () => {
    const rto = DOC.replace(F("ref_awb", "None"), F("ref_awb", "9012345670"))
      .replace(F("status", "Delivered"), F("status", "RTO Initiated"))
      .replace(F("reason_code_number", "999"), F("reason_code_number", ""));
    const s = parseEcomExpress(rto, "8012345670");
    expect(s.rtoNumber).toBe("9012345670");
    expect(s.summary).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    const back = parseEcomExpress(
      rto.replace(F("status", "RTO Initiated"), F("status", "Returned to shipper")),
      "8012345670",
    );
    expect(back.summary).toMatchObject({ state: "returned", subStatus: "rto_delivered" });
  });

  test.each([
    ['<?xml version="1.0"?><ecomexpress-objects version="1.0"></ecomexpress-objects>', "not_found"],
    ['<ecomexpress-objects version="1.0"/>', "not_found"],
    ["Unauthorised access", "auth"],
    ["Invalid username or password", "auth"],
    ["<html><body>502</body></html>", "backend"],
    ['<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><ecomexpress-objects>&a;</ecomexpress-objects>', "backend"],
    ["<ecomexpress-objects><object", "backend"],
    ["", "backend"],
    ['{"awb": "8012345670"}', "backend"],
  ])("%p → %p", (body, kind) => {
    expect(kindOf(() => parseEcomExpress(body, "8012345670"))).toBe(kind);
  });

  test.each([
    ["999", "anything", "delivered"],
    ["", "Soft data uploaded", "pending"],
    ["", "Out for delivery", "out_for_delivery"],
    ["", "Shipment Cancelled", "cancelled"],
    ["", "LOST", "exception"],
    ["123", "Some new wording", "in_transit"],
    ["", "", "in_transit"],
  ])("code %p + %p → %s (never delivered by default)", (code, text, state) => {
    expect(ecomRule(code, text).state).toBe(state as never);
  });
});

describe("Ecom Express request (as documented: form POST to track_me/api/mawbd/)", () => {
  test("POST form awb, username, password", async () => {
    const { seen, result } = await capture(
      "8012345670",
      () => new Response(DOC, { headers: { "content-type": "application/xml" } }),
    );
    expect(seen).toHaveLength(1);
    const r = present(seen[0]);
    expect(r.method).toBe("POST");
    expect(r.path).toBe("/track_me/api/mawbd/");
    expect(r.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({
      awb: "8012345670",
      username: "shop&co",
      password: "p=ss word",
    });
    expect((result as TrackingSnapshot).checkpoints).toHaveLength(8);
    expect(ecomexpressAdapter.defaultBaseUrl).toBe("https://plapi.ecomexpress.in");
    expect(ecomexpressAdapter.credentialVars).toEqual(["ECOMEXPRESS_USERNAME", "ECOMEXPRESS_PASSWORD"]);
  });

  test.each([
    [401, "auth"],
    [403, "rate_limited"],
    [429, "rate_limited"],
    [500, "backend"],
    [404, "backend"],
  ])("HTTP %i → %s", async (status, kind) => {
    const { result } = await capture("8012345670", () => new Response("x", { status }));
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });
});

describe("Ecom Express through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const ecom = present(courierBySlug("ecomexpress"));
  const lookup = (awb: string) => sb.backends.lookup(ecom, awb).then((r) => r.snapshot);
  const fail = (awb: string) =>
    sb.backends.lookup(ecom, awb).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("digit 0: delivered, full history", async () => {
    const s = await lookup("8012345670");
    expect(s.checkpoints).toHaveLength(7);
    expect(newest(s.checkpoints)).toMatchObject({ state: "delivered", rawCode: "999" });
    expect(s.summary?.state).toBe("delivered");
    expect(sb.sim.calls("ecomexpress", "8012345670")).toBe(1);
  });

  test("digit 1: advances one checkpoint per step until delivered", async () => {
    const states: string[] = [];
    for (let step = 0; step <= 4; step++) {
      const s = await lookup("8012345671");
      states.push(`${newest(s.checkpoints).state}:${s.checkpoints.length}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["in_transit:3", "in_transit:4", "in_transit:5", "out_for_delivery:6", "delivered:7"]);
  });

  test("digit 2: out for delivery, next step delivered", async () => {
    expect(newest((await lookup("8012345682")).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await lookup("8012345682")).checkpoints).state).toBe("delivered");
  });

  test("digit 3: undelivered with reason, then RTO (ref_awb), then returned", async () => {
    const s0 = await lookup("8012345693");
    expect(newest(s0.checkpoints)).toMatchObject({ state: "exception", subStatus: "delivery_attempt_failed" });
    expect(s0.remark).toBe("Consignee not available");
    clock.advance(3_600_000);
    const s1 = await lookup("8012345693");
    expect(newest(s1.checkpoints)).toMatchObject({ state: "exception", subStatus: "rto_in_transit" });
    expect(s1.rtoNumber).toBe("9012345693");
    clock.advance(3_600_000);
    expect(newest((await lookup("8012345693")).checkpoints)).toMatchObject({
      state: "returned",
      subStatus: "rto_delivered",
    });
  });

  test("digit 4 → not_found; 5 → timeout; 6 → backend", async () => {
    expect([await fail("8012345674"), await fail("8012345675"), await fail("8012345676")]).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("digit 7: soft data uploaded, no scans → pending", async () => {
    const s = await lookup("8012345677");
    expect(s.checkpoints).toEqual([]);
    expect(s.summary).toMatchObject({ state: "pending", subStatus: "info_received" });
  });

  test("digit 8: cancelled", async () => {
    expect(newest((await lookup("8012345678")).checkpoints).state).toBe("cancelled");
  });

  test("wrong password → the twin's 401 → auth", async () => {
    const res = await fetch(`${sb.sim.baseUrlFor("ecomexpress")}/track_me/api/mawbd/`, {
      method: "POST",
      body: new URLSearchParams({ awb: "8012345670", username: "x", password: "y" }),
    });
    expect(res.status).toBe(401);
  });
});
