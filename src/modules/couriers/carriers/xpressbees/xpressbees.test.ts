/**
 * Xpressbees has no direct API sample (`fixtures/SOURCE.md`); its raw status
 * codes appear in `xpressbees/shiprocket-track-awb.json` (a real Xpressbees Surface
 * shipment seen through Shiprocket). These tests map those raw codes and
 * re-shape that real history into the documented `shipments2/track` JSON.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { clearXpressbeesTokens, parseXpressbees, xpressbeesAdapter, xpressbeesRule } from "./adapter.ts";
import type { CourierError } from "../../adapters/types.ts";
import type { TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { courierBySlug } from "../../catalogue.ts";
import { FakeClock } from "../../../../lib/clock.ts";
import { captureTrack, kindOf, newest, type Seen } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

interface Activity {
  date: string;
  status: string;
  activity: string;
  location: string;
}
const shiprocket = JSON.parse(sample("xpressbees/shiprocket-track-awb.json")) as {
  tracking_data: { shipment_track_activities: Activity[] };
};
const activities = shiprocket.tracking_data.shipment_track_activities;

/** The real Shiprocket history in the documented Xpressbees shape (event_time "%Y-%m-%d %H:%M"). */
const XB_DOC = JSON.stringify({
  status: true,
  data: {
    awb_number: "141123221084922",
    status: "delivered",
    history: activities.map((a) => ({
      status_code: a.status,
      location: a.location,
      event_time: a.date.slice(0, 16),
      message: a.activity.trim(),
    })),
  },
});

const capture = (awb: string, respond: (req: Seen) => Response) => {
  clearXpressbeesTokens();
  return captureTrack(
    xpressbeesAdapter,
    awb,
    { XPRESSBEES_EMAIL: "ops@shop.example", XPRESSBEES_PASSWORD: 'pa"ss' },
    respond,
  );
};

const login = (t: string) => Response.json({ status: true, data: t });
const isLogin = (r: Seen) => r.path.endsWith("/api/users/login");

describe("Xpressbees raw codes (real, via shiprocket-track-awb.json)", () => {
  test.each([
    ["DLVD", "delivered"],
    ["OFD", "out_for_delivery"],
    ["RAD", "in_transit"],
    ["IT", "in_transit"],
    ["PKD", "in_transit"],
    ["PUD", "in_transit"],
    ["OFP", "pending"],
    ["DRC", "pending"],
  ])("%s → %s", (code, state) => {
    const a = present(activities.find((x) => x.status === code));
    expect(a).toBeDefined();
    expect(xpressbeesRule(code, a.activity).state).toBe(state as never);
  });

  test("the real history in the documented shape: 8 events, newest delivered 2022-07-19 11:37 IST", () => {
    const snap = parseXpressbees(XB_DOC, "141123221084922");
    expect(snap.checkpoints).toHaveLength(8);
    expect(newest(snap.checkpoints)).toMatchObject({
      state: "delivered",
      localDate: "2022-07-19",
      localTime: "11:37",
      at: "2022-07-19T06:07:00.000Z",
      rawCode: "DLVD",
      rawStatus: "Delivered",
      location: "MADANPALLI, Madanapalli, ANDHRA PRADESH",
    });
    expect(snap.checkpoints.find((c) => c.rawCode === "RAD")?.subStatus).toBe("reached_destination");
    expect(snap.summary).toMatchObject({ state: "delivered", rawStatus: "delivered" });
    expect([snap.podUrl, snap.remark]).toEqual([null, null]);
  });

  test.each([
    ["UD", "Consignee not available", "exception", "delivery_attempt_failed"],
    ["RTO", "RTO Initiated", "exception", "rto_in_transit"],
    ["RTO-IT", "RTO In Transit", "exception", "rto_in_transit"],
    ["RTO-DLVD", "RTO Delivered", "returned", "rto_delivered"],
    ["RTO-XYZ", "RTO delivered to shipper", "returned", "rto_delivered"],
    ["LOST", "Shipment lost", "exception", "lost"],
    ["CAN", "Cancelled", "cancelled", null],
    ["NEWCODE", "Some unknown wording", "in_transit", null],
    ["", "", "in_transit", null],
  ])("unverified %s / %p → %s/%s", (code, text, state, subStatus) => {
    const r = xpressbeesRule(code, text);
    expect([r.state as string, (r.sub ?? null) as string | null]).toEqual([state, subStatus]);
  });

  test.each([
    ['{"status":false,"message":"No data found"}', "not_found"],
    ['{"status":false,"message":"Token expired"}', "auth"],
    ['{"status":true,"data":null}', "backend"],
    ['{"status":true,"data":{"history":"none"}}', "backend"],
    ["<html>502</html>", "backend"],
    ['{"status":true,"data":{"hist', "backend"],
    ["", "backend"],
  ])("%p → %p", (body, kind) => {
    expect(kindOf(() => parseXpressbees(body, "14123456789014"))).toBe(kind);
  });

  test("an exception event keeps its message as remark", () => {
    const snap = parseXpressbees(
      JSON.stringify({
        status: true,
        data: {
          status: "exception",
          history: [
            {
              status_code: "UD",
              location: "PUNE",
              event_time: "2026-11-05 10:20",
              message: "Undelivered: Consignee not available",
            },
          ],
        },
      }),
      "x",
    );
    expect(snap.remark).toBe("Undelivered: Consignee not available");
    expect(snap.checkpoints[0]?.at).toBe("2026-11-05T04:50:00.000Z");
  });
});

describe("Xpressbees requests (as documented: login, then shipments2/track with Bearer)", () => {
  test("POST /api/users/login {email,password}, then GET /api/shipments2/track/{awb} with the Bearer token", async () => {
    const { seen, result } = await capture("141123221084922", (r) =>
      isLogin(r) ? login("tok-1") : new Response(XB_DOC, { headers: { "content-type": "application/json" } }),
    );
    expect(seen).toHaveLength(2);
    const [l, t] = seen as [Seen, Seen];
    expect([l.method, l.path, l.headers.get("content-type")]).toEqual(["POST", "/api/users/login", "application/json"]);
    expect(JSON.parse(l.body)).toEqual({ email: "ops@shop.example", password: 'pa"ss' });
    expect([t.method, t.path, t.headers.get("authorization"), t.body]).toEqual([
      "GET",
      "/api/shipments2/track/141123221084922",
      "Bearer tok-1",
      "",
    ]);
    expect((result as TrackingSnapshot).checkpoints).toHaveLength(8);
    expect(xpressbeesAdapter.defaultBaseUrl).toBe("https://shipment.xpressbees.com");
    expect(xpressbeesAdapter.credentialVars).toEqual(["XPRESSBEES_EMAIL", "XPRESSBEES_PASSWORD"]);
  });

  test("401 on tracking → exactly one new login, retried with the new token", async () => {
    let n = 0;
    const { seen, result } = await capture("141123221084922", (r) =>
      isLogin(r)
        ? login(`tok-${++n}`)
        : r.headers.get("authorization") === "Bearer tok-1"
          ? Response.json({ status: false, message: "Unauthorized" }, { status: 401 })
          : new Response(XB_DOC),
    );
    expect(seen.map((s) => (isLogin(s) ? "login" : "track"))).toEqual(["login", "track", "login", "track"]);
    expect(seen[3]?.headers.get("authorization")).toBe("Bearer tok-2");
    expect((result as TrackingSnapshot).checkpoints).toHaveLength(8);
  });

  test("401 again after the refresh → auth, no third login", async () => {
    const { seen, result } = await capture("141123221084922", (r) =>
      isLogin(r) ? login("t") : new Response("{}", { status: 401 }),
    );
    expect(seen).toHaveLength(4);
    expect((result as CourierError).kind).toBe("auth");
  });

  test.each([
    [200, '{"status":false,"message":"Invalid email or password"}', "auth"],
    [401, '{"status":false}', "auth"],
    [200, '{"status":true,"data":""}', "backend"],
    [200, "<html>maintenance</html>", "backend"],
    [429, "", "rate_limited"],
    [503, "", "backend"],
  ])("login answering HTTP %i %p → %s", async (status, body, kind) => {
    const { seen, result } = await capture("14123456789010", () => new Response(body, { status }));
    expect(seen).toHaveLength(1);
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });

  test.each([
    [404, "not_found"],
    [403, "rate_limited"],
    [429, "rate_limited"],
    [500, "backend"],
  ])("tracking answering HTTP %i → %s", async (status, kind) => {
    const { result } = await capture("14123456789010", (r) =>
      isLogin(r) ? login("t") : new Response("x", { status }),
    );
    expect((result as CourierError).kind).toBe(kind as CourierError["kind"]);
  });
});

describe("Xpressbees through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const xb = present(courierBySlug("xpressbees"));
  const lookup = (awb: string) => sb.backends.lookup(xb, awb).then((r) => r.snapshot);
  const fail = (awb: string) =>
    sb.backends.lookup(xb, awb).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("token caching: 100 parallel lookups of different numbers → one login", async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => lookup(String(14_100_000_000_000 + i * 10))),
    );
    expect(results.every((s) => newest(s.checkpoints).state === "delivered")).toBe(true);
    expect(sb.sim.calls("xpressbees-token", "*")).toBe(1);
  });

  test("an expired token (25 h later) → one refresh for 100 parallel lookups", async () => {
    clock.advance(25 * 3_600_000);
    await Promise.all(Array.from({ length: 100 }, (_, i) => lookup(String(14_200_000_000_000 + i * 10))));
    expect(sb.sim.calls("xpressbees-token", "*")).toBe(2);
  });

  test("a token the courier forgot (refused) → exactly one refresh", async () => {
    sb.sim.reset();
    expect(newest((await lookup("14300000000000")).checkpoints).state).toBe("delivered");
    expect(sb.sim.calls("xpressbees-token", "*")).toBe(1);
  });

  test("digit 0: delivered, full history", async () => {
    const s = await lookup("14123456789010");
    expect(s.checkpoints).toHaveLength(7);
    expect(newest(s.checkpoints)).toMatchObject({ state: "delivered", rawCode: "DLVD" });
  });

  test("digit 1: advances one checkpoint per step until delivered", async () => {
    const states: string[] = [];
    for (let step = 0; step <= 4; step++) {
      const s = await lookup("14123456789011");
      states.push(`${newest(s.checkpoints).state}:${s.checkpoints.length}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["in_transit:3", "in_transit:4", "in_transit:5", "out_for_delivery:6", "delivered:7"]);
  });

  test("digit 2: out for delivery, next step delivered", async () => {
    expect(newest((await lookup("14123456789022")).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await lookup("14123456789022")).checkpoints).state).toBe("delivered");
  });

  test("digit 3: undelivered, then RTO, then returned", async () => {
    const s0 = await lookup("14123456789033");
    expect(newest(s0.checkpoints)).toMatchObject({
      state: "exception",
      subStatus: "delivery_attempt_failed",
      rawCode: "UD",
    });
    expect(s0.remark).toContain("Consignee not available");
    clock.advance(3_600_000);
    expect(newest((await lookup("14123456789033")).checkpoints)).toMatchObject({
      state: "exception",
      subStatus: "rto_in_transit",
    });
    clock.advance(3_600_000);
    expect(newest((await lookup("14123456789033")).checkpoints)).toMatchObject({
      state: "returned",
      subStatus: "rto_delivered",
    });
  });

  test("digit 4 → not_found; 5 → timeout; 6 → backend", async () => {
    expect([await fail("14123456789014"), await fail("14123456789015"), await fail("14123456789016")]).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("digit 7: data received, no history → pending", async () => {
    const s = await lookup("14123456789017");
    expect(s.checkpoints).toEqual([]);
    expect(s.summary).toMatchObject({ state: "pending", subStatus: "info_received" });
  });

  test("digit 8: cancelled", async () => {
    expect(newest((await lookup("14123456789018")).checkpoints).state).toBe("cancelled");
  });
});
