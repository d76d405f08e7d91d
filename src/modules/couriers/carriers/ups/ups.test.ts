import { afterAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../lib/clock.ts";
import { CourierError } from "../../adapters/types.ts";
import { parseUps, photoDataUrl, UPS_TRANSACTION_SRC, upsAdapter, upsEstimate, upsRule } from "./adapter.ts";
import { courierBySlug } from "../../catalogue.ts";
import { UPS_SANDBOX_PHOTO, UPS_TOKEN_SECONDS } from "./twin.ts";
import { courierLoopback, kindOf, newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

const ups = present(courierBySlug("ups"));

const loopback = (track: (req: Request) => Response | Promise<Response>) =>
  courierLoopback(
    "ups",
    { UPS_CLIENT_ID: "cid", UPS_CLIENT_SECRET: "csecret" },
    (s, i, req) =>
      s.path.endsWith("/security/v1/oauth/token")
        ? Response.json({ token_type: "Bearer", access_token: `tok-${i + 1}`, expires_in: "14399", status: "approved" })
        : track(req),
    "/base",
  );

describe("UPS samples", () => {
  test("ups/track.json (real): delivered, 2 activities, YYYYMMDD + HHMMSS kept as local wall time", () => {
    const snap = parseUps(sample("ups/track.json"), "1Z1442YY7229014688");
    expect(snap.checkpoints).toHaveLength(2);
    expect(snap.checkpoints.map((c) => c.state)).toEqual(["delivered", "pending"]);
    const n = newest(snap.checkpoints);
    expect([n.localDate, n.localTime, n.at]).toEqual(["2022-01-26", "16:30", "2022-01-26T16:30:00.000Z"]);
    expect([n.rawCode, n.rawStatus, n.location]).toEqual(["011", "DELIVERED", "PARAMUS, NJ"]);
    expect(snap.checkpoints[1]?.localTime).toBe("15:16");
    expect(snap.podUrl).toBeNull();
    expect(snap.remark).toBeNull();
  });

  test("ups/track-openapi-example.json: parses (placeholder photo is not a POD)", () => {
    const snap = parseUps(sample("ups/track-openapi-example.json"), "1Z023E2X0214323462");
    expect(snap.checkpoints).toHaveLength(1);
    expect(snap.podUrl).toBeNull();
  });

  test.each([
    ["ups/track-error-notfound.json", "not_found"],
    ["ups/track-error-invalid.json", "invalid_number"],
    ["ups/auth-error.json", "auth"],
  ])("%s → %s", (file, kind) => {
    expect(kindOf(() => parseUps(sample(file), "1Z1442YY7229014688"))).toBe(kind);
  });

  test("catalogue pattern accepts the sample numbers", () => {
    for (const n of ["1Z1442YY7229014688", "1Z023E2X0214323462", "1Z12345E6205277936"])
      expect(ups.awb.pattern.test(n)).toBe(true);
  });

  test("mapping: statusCode first, then status.type, then keywords", () => {
    const st = (type: string, statusCode: string, description = "") => {
      const r = upsRule({ type, statusCode, description });
      return r.sub ? `${r.state}/${r.sub}` : r.state;
    };
    expect(st("M", "")).toBe("pending/info_received");
    expect(st("MV", "")).toBe("cancelled");
    expect(st("I", "")).toBe("in_transit");
    expect(st("P", "")).toBe("in_transit/picked_up");
    expect(st("X", "")).toBe("exception");
    expect(st("NA", "")).toBe("pending");
    expect(st("I", "021")).toBe("out_for_delivery");
    expect(st("D", "011")).toBe("delivered");
    expect(st("X", "067")).toBe("exception/rto_in_transit");
    expect(st("I", "017")).toBe("out_for_delivery/ready_for_pickup");
    expect(st("X", "007")).toBe("cancelled");
    expect(st("D", "011", "Returned to the sender.")).toBe("returned/rto_delivered");
    expect(st("X", "048", "Delivery attempt failed. The receiver was not available.")).toBe(
      "exception/delivery_attempt_failed",
    );
    expect(st("ZZ", "999", "")).toBe("in_transit");
  });

  test("delivery photo → data URL only for a recognisable image", () => {
    expect(photoDataUrl(UPS_SANDBOX_PHOTO)).toBe(`data:image/gif;base64,${UPS_SANDBOX_PHOTO}`);
    expect(photoDataUrl("encoding Base64")).toBeNull();
    expect(photoDataUrl("AAAA")).toBeNull();
  });

  test.each([
    "",
    "<html>502</html>",
    '{"trackResponse":{}}',
    '{"trackResponse":{"shipment":[{"package":[{"activity":[{"date":1}]}]}]}}',
    '{"trackResp',
  ])("hostile body %p → classified, never a crash", (body) => {
    try {
      expect(parseUps(body, "1").checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
    }
  });
});

describe("UPS requests (loopback)", () => {
  test("Basic-auth token, then GET /api/track/v1/details/{n}?locale=en_US&returnSignature=false with Bearer, transId, transactionSrc", async () => {
    const lb = loopback(
      () => new Response(sample("ups/track.json"), { headers: { "content-type": "application/json" } }),
    );
    try {
      await upsAdapter.track("1Z1442YY7229014688", lb.ctx);
      await upsAdapter.track("1Z1442YY7229014688", lb.ctx);
      const [tok, t1, t2] = lb.seen;
      expect(lb.seen).toHaveLength(3); // one token for both lookups
      expect([tok?.method, tok?.path, tok?.body]).toEqual([
        "POST",
        "/base/security/v1/oauth/token",
        "grant_type=client_credentials",
      ]);
      expect(tok?.headers.get("authorization")).toBe(`Basic ${btoa("cid:csecret")}`);
      expect(tok?.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
      expect([t1?.method, t1?.path]).toEqual(["GET", "/base/api/track/v1/details/1Z1442YY7229014688"]);
      expect(Object.fromEntries(t1?.query ?? [])).toEqual({ locale: "en_US", returnSignature: "false" });
      expect(t1?.headers.get("authorization")).toBe("Bearer tok-1");
      expect(t1?.headers.get("transid")).toMatch(/^[0-9a-f]{32}$/);
      expect(t1?.headers.get("transactionsrc")).toBe(UPS_TRANSACTION_SRC);
      expect(t2?.headers.get("transid")).not.toBe(t1?.headers.get("transid"));
    } finally {
      await lb.close();
    }
  });

  test("401 → exactly one token refresh; still 401 → auth", async () => {
    const lb = loopback(() =>
      Response.json(
        { response: { errors: [{ code: "250002", message: "Invalid Authentication Information." }] } },
        { status: 401 },
      ),
    );
    try {
      expect(
        await upsAdapter.track("1Z12345E0205271680", lb.ctx).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      ).toBe("auth");
      expect(lb.seen.map((r) => r.method)).toEqual(["POST", "GET", "POST", "GET"]);
    } finally {
      await lb.close();
    }
  });

  test.each([
    [400, sample("ups/track-error-invalid.json"), "invalid_number"],
    [404, '{"response":{"errors":[{"code":"TW0001","message":"Tracking Information Not Found"}]}}', "not_found"],
    [403, "Forbidden", "rate_limited"],
    [429, "{}", "rate_limited"],
    [500, "{}", "backend"],
    [502, "<html>bad gateway</html>", "backend"],
    [200, "<html>?</html>", "backend"],
  ])("HTTP %d %p → %s", async (status, body, kind) => {
    const lb = loopback(() => new Response(body, { status }));
    try {
      expect(
        await upsAdapter.track("1Z12345E0205271680", lb.ctx).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      ).toBe(kind);
    } finally {
      await lb.close();
    }
  });
});

describe("UPS through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const look = (n: string) => sb.backends.lookup(ups, n).then((r) => r.snapshot);
  const kind = (n: string) =>
    sb.backends.lookup(ups, n).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );
  const tokenCalls = () => sb.sim.calls("ups", "oauth/token");
  const awb = (d: number | string) => `1Z12345E020527168${d}`;

  test("token caching: 100 parallel lookups of different numbers → one token request", async () => {
    const numbers = Array.from({ length: 100 }, (_, i) => `1Z9${String(i).padStart(14, "0")}0`);
    const snaps = await Promise.all(numbers.map(look));
    expect(snaps.every((s) => newest(s.checkpoints).state === "delivered")).toBe(true);
    expect(tokenCalls()).toBe(1);
  });

  test("an expired token → one refresh", async () => {
    clock.advance(UPS_TOKEN_SECONDS * 1000);
    await Promise.all([look("1Z8000000000000010"), look("1Z8000000000000020")]);
    expect(tokenCalls()).toBe(2);
  });

  test("0: delivered, full history, delivery photo as POD", async () => {
    const snap = await look(awb(0));
    expect(snap.checkpoints).toHaveLength(7);
    expect(newest(snap.checkpoints).state).toBe("delivered");
    expect(snap.podUrl).toBe(`data:image/gif;base64,${UPS_SANDBOX_PHOTO}`);
    expect(snap.originCity).not.toBeNull();
  });

  test("1: in transit, one checkpoint per step until delivered", async () => {
    const states: string[] = [];
    for (let i = 0; i <= 4; i++) {
      const snap = await look(awb(1));
      states.push(`${snap.checkpoints.length}:${newest(snap.checkpoints).state}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["3:in_transit", "4:in_transit", "5:in_transit", "6:out_for_delivery", "7:delivered"]);
  });

  test("2: out for delivery, next step delivered", async () => {
    expect(newest((await look(awb(2))).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await look(awb(2))).checkpoints).state).toBe("delivered");
  });

  test("3: failed attempt with remark, then return to sender, then returned", async () => {
    const first = newest((await look(awb(3))).checkpoints);
    expect([first.state, first.subStatus]).toEqual(["exception", "delivery_attempt_failed"]);
    expect(first.remark).toContain("receiver was not available");
    clock.advance(3_600_000);
    const second = newest((await look(awb(3))).checkpoints);
    expect([second.state, second.subStatus]).toEqual(["exception", "rto_in_transit"]);
    clock.advance(3_600_000);
    expect(newest((await look(awb(3))).checkpoints).state).toBe("returned");
  });

  test("4 → not_found (TW0001 in a 200), 5 → timeout, 6 → backend", async () => {
    expect(await Promise.all([awb(4), awb(5), awb(6)].map(kind))).toEqual(["not_found", "timeout", "backend"]);
  });

  test("7: label created, no scans → pending, empty table", async () => {
    const snap = await look(awb(7));
    expect(snap.checkpoints).toEqual([]);
    expect(snap.summary?.state).toBe("pending");
  });

  test("8: cancelled (voided)", async () => {
    expect(newest((await look(awb(8))).checkpoints).state).toBe("cancelled");
  });
});

describe("UPS estimated delivery (EDD)", () => {
  test("samples: a delivered package lists only DEL (the delivery, not an estimate); the OpenAPI example's placeholder is no date", () => {
    expect(parseUps(sample("ups/track.json"), "1Z1442YY7229014688").estimatedDelivery).toBeNull();
    expect(parseUps(sample("ups/track-openapi-example.json"), "1Z023E2X0214323462").estimatedDelivery).toBeNull();
  });

  test("deliveryDate: RDD (rescheduled) wins over SDD (scheduled); DEL is ignored", () => {
    expect(upsEstimate({ deliveryDate: [{ type: "SDD", date: "20220128" }] })).toBe("2022-01-28");
    expect(
      upsEstimate({
        deliveryDate: [
          { type: "SDD", date: "20220128" },
          { type: "RDD", date: "20220131" },
        ],
      }),
    ).toBe("2022-01-31");
    expect(upsEstimate({ deliveryDate: [{ type: "DEL", date: "20220126" }] })).toBeNull();
    expect(upsEstimate({ deliveryDate: [{ type: "SDD", date: "20220231" }] })).toBeNull();
    expect(upsEstimate({})).toBeNull();
  });

  test("a scheduled date in a real answer's shape is read through parseUps", () => {
    const doc = JSON.parse(sample("ups/track.json"));
    doc.trackResponse.shipment[0].package[0].deliveryDate = [{ type: "SDD", date: "20220127" }];
    expect(parseUps(JSON.stringify(doc), "1Z1442YY7229014688").estimatedDelivery).toBe("2022-01-27");
  });

  test("through the simulator: SDD until delivery, then DEL only (no EDD); none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("ups", (d) => `1Z12345E020527168${d}`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: null },
      returned: { state: "returned", edd: null },
    });
  });
});
