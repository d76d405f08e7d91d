import { afterAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../lib/clock.ts";
import { fedexAdapter, fedexEstimate, fedexRule, parseFedex } from "./adapter.ts";
import { CourierError } from "../../adapters/types.ts";
import { courierBySlug } from "../../catalogue.ts";
import { FEDEX_TOKEN_SECONDS } from "./twin.ts";
import { courierLoopback, kindOf, newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

const fedex = present(courierBySlug("fedex"));

const loopback = (track: (req: Request) => Response | Promise<Response>) =>
  courierLoopback(
    "fedex",
    { FEDEX_CLIENT_ID: "id-1", FEDEX_CLIENT_SECRET: "s&cret=1" },
    (s, i, req) =>
      s.path.endsWith("/oauth/token")
        ? Response.json({ access_token: `tok-${i + 1}`, token_type: "bearer", expires_in: 3599, scope: "CXS" })
        : track(req),
    "/base",
  );

describe("FedEx samples", () => {
  test("fedex/track.json: two trackResults for one number → the one with the newest scan (delivered)", () => {
    const snap = parseFedex(sample("fedex/track.json"), "776094337676");
    expect(snap.checkpoints).toHaveLength(8);
    const n = newest(snap.checkpoints);
    expect([n.state, n.localDate, n.localTime, n.at]).toEqual([
      "delivered",
      "2024-04-26",
      "09:26",
      "2024-04-26T16:26:00.000Z",
    ]);
    expect(snap.summary?.state).toBe("delivered");
    // Order as FedEx sent it: newest first.
    expect(snap.checkpoints.map((c) => c.rawCode)).toEqual(["DL", "OD", "AO", "PU", "AF", "DE", "DE", "OD"]);
    const attempts = snap.checkpoints.filter((c) => c.state === "exception");
    expect(attempts.map((c) => [c.subStatus, c.remark])).toEqual([
      ["delivery_attempt_failed", "FedEx redirected your package to a nearby FedEx location"],
      ["delivery_attempt_failed", "Customer not available or business closed"],
    ]);
    expect(snap.checkpoints.filter((c) => c.state === "out_for_delivery")).toHaveLength(2);
    expect(snap.podUrl).toBeNull(); // FedEx names SIGNATURE_PROOF_OF_DELIVERY but gives no URL
    expect(snap.remark).toBeNull();
    expect(snap.destinationCity).toBe("FRESNO");
  });

  test("fedex/track.json first result alone: running late, ready-for-pickup and delay scans", () => {
    const doc = JSON.parse(sample("fedex/track.json"));
    doc.output.completeTrackResults[0].trackResults.pop();
    const snap = parseFedex(JSON.stringify(doc), "776094337676");
    expect(snap.checkpoints).toHaveLength(10);
    expect(newest(snap.checkpoints).state).toBe("in_transit");
    expect(snap.summary).toMatchObject({ state: "in_transit", subStatus: "reached_destination", rawCode: "FD" });
    const hp = present(snap.checkpoints.find((c) => c.rawCode === "HP"));
    expect([hp.state, hp.subStatus, hp.remark]).toEqual([
      "out_for_delivery",
      "ready_for_pickup",
      "Package available for pickup at: 2420 N BLACKSTONE AVE",
    ]);
    const dy = present(snap.checkpoints.find((c) => c.rawCode === "DY"));
    expect([dy.state, dy.subStatus, dy.remark]).toEqual(["exception", "delayed", "Package delayed"]);
    expect(snap.checkpoints.find((c) => c.rawCode === "OC")?.state).toBe("pending");
  });

  test("fedex/track-delivered.json: 17 scans, delivered, a scan without offset borrows its neighbour's", () => {
    const snap = parseFedex(sample("fedex/track-delivered.json"), "738488882438");
    expect(snap.checkpoints).toHaveLength(17);
    const n = newest(snap.checkpoints);
    expect([n.state, n.localDate, n.localTime, n.location]).toEqual([
      "delivered",
      "2024-08-20",
      "12:41",
      "Blue Point, NY",
    ]);
    expect(n.at).toBe("2024-08-20T16:41:57.000Z");
    const naive = present(snap.checkpoints[16]);
    expect([naive.rawCode, naive.localDate, naive.localTime, naive.at]).toEqual([
      "PU",
      "2024-08-15",
      "00:00",
      "2024-08-15T05:00:00.000Z",
    ]);
    expect(snap.summary?.at).toBe("2024-08-20T16:41:57.000Z");
    expect(snap.originCity).toBe("MANKATO");
    expect(snap.remark).toBeNull();
  });

  test("fedex/track-openapi-example.json: its per-number error (TRACKING.TRACKINGNUMBER.EMPTY) wins → invalid_number", () => {
    expect(kindOf(() => parseFedex(sample("fedex/track-openapi-example.json"), "123456789012"))).toBe("invalid_number");
  });

  test("fedex/track-error.json (whole-request errors[]) → invalid_number", () => {
    expect(kindOf(() => parseFedex(sample("fedex/track-error.json"), "123456789012"))).toBe("invalid_number");
  });

  test("per-number NOTFOUND inside a 200 → not_found", () => {
    const body = JSON.stringify({
      output: {
        completeTrackResults: [
          {
            trackingNumber: "123456789014",
            trackResults: [
              {
                trackingNumberInfo: { trackingNumber: "123456789014" },
                error: { code: "TRACKING.TRACKINGNUMBER.NOTFOUND", message: "Tracking number cannot be found." },
              },
            ],
          },
        ],
      },
    });
    expect(kindOf(() => parseFedex(body, "123456789014"))).toBe("not_found");
  });

  test("catalogue pattern accepts the sample numbers", () => {
    for (const n of ["776094337676", "738488882438", "123456789012", "399368623212"])
      expect(fedex.awb.pattern.test(n)).toBe(true);
  });

  test("mapping table per `fixtures/SOURCE.md`", () => {
    const st = (codes: string[], text = "") => {
      const r = fedexRule(codes, text);
      return r.sub ? `${r.state}/${r.sub}` : r.state;
    };
    expect(
      ["OC", "EP", "PU", "IT", "AR", "DP", "OD", "DL", "DE", "SE", "CA", "HP", "RS", "RL"].map((c) => st([c])),
    ).toEqual([
      "pending/info_received",
      "pending",
      "in_transit/picked_up",
      "in_transit",
      "in_transit",
      "in_transit",
      "out_for_delivery",
      "delivered",
      "exception/delivery_attempt_failed",
      "exception",
      "cancelled",
      "out_for_delivery/ready_for_pickup",
      "exception/rto_in_transit",
      "in_transit/delayed",
    ]);
    expect(st(["DL"], "Delivered - returned to shipper")).toBe("returned/rto_delivered");
    expect(st(["ZZ"], "")).toBe("in_transit");
  });

  test.each([
    "",
    "<html>502</html>",
    '{"output":{}}',
    '{"output":{"completeTrackResults":[{"trackResults":[{"scanEvents":[{"date":5}]}]}]}',
    '{"output":{"completeTrackR',
  ])("hostile body %p → classified, never a crash", (body) => {
    try {
      expect(parseFedex(body, "1").checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
    }
  });
});

describe("FedEx requests (loopback)", () => {
  test("token by client credentials form, then POST /track/v1/trackingnumbers as documented", async () => {
    const lb = loopback(
      () => new Response(sample("fedex/track-delivered.json"), { headers: { "content-type": "application/json" } }),
    );
    try {
      const snap = await fedexAdapter.track("738488882438", lb.ctx);
      expect(snap.checkpoints).toHaveLength(17);
      const [tok, track] = lb.seen;
      expect([tok?.method, tok?.path]).toEqual(["POST", "/base/oauth/token"]);
      expect(tok?.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
      expect(Object.fromEntries(new URLSearchParams(tok?.body))).toEqual({
        grant_type: "client_credentials",
        client_id: "id-1",
        client_secret: "s&cret=1",
      });
      expect([track?.method, track?.path]).toEqual(["POST", "/base/track/v1/trackingnumbers"]);
      expect(track?.headers.get("authorization")).toBe("Bearer tok-1");
      expect(track?.headers.get("content-type")).toBe("application/json");
      expect(track?.headers.get("x-locale")).toBe("en_US");
      const documented = JSON.parse(sample("fedex/track-request.json"));
      documented.trackingInfo = documented.trackingInfo.slice(0, 1);
      documented.trackingInfo[0].trackingNumberInfo.trackingNumber = "738488882438";
      expect(JSON.parse(track?.body ?? "")).toEqual(documented);
      // A second lookup reuses the cached token.
      await fedexAdapter.track("738488882438", lb.ctx);
      expect(lb.seen.filter((r) => r.path.endsWith("/oauth/token"))).toHaveLength(1);
    } finally {
      await lb.close();
    }
  });

  test("401 on tracking → exactly one token refresh; still 401 → auth", async () => {
    const lb = loopback(() =>
      Response.json(
        { errors: [{ code: "NOT.AUTHORIZED.ERROR", message: "The given JWT is invalid." }] },
        { status: 401 },
      ),
    );
    try {
      const got = await fedexAdapter.track("123456789010", lb.ctx).then(
        () => "ok",
        (e: CourierError) => e.kind,
      );
      expect(got).toBe("auth");
      expect(lb.seen.map((r) => r.path.replace("/base", ""))).toEqual([
        "/oauth/token",
        "/track/v1/trackingnumbers",
        "/oauth/token",
        "/track/v1/trackingnumbers",
      ]);
      expect(lb.seen[3]?.headers.get("authorization")).toBe("Bearer tok-3");
    } finally {
      await lb.close();
    }
  });

  test.each([
    [403, "Forbidden", "rate_limited"],
    [429, "{}", "rate_limited"],
    [400, sample("fedex/track-error.json"), "invalid_number"],
    [500, '{"errors":[{"code":"INTERNAL.SERVER.ERROR"}]}', "backend"],
    [503, "<html>down</html>", "backend"],
    [200, "<html>ok?</html>", "backend"],
  ])("HTTP %d %p → %s", async (status, body, kind) => {
    const lb = loopback(() => new Response(body, { status }));
    try {
      expect(
        await fedexAdapter.track("123456789010", lb.ctx).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      ).toBe(kind);
    } finally {
      await lb.close();
    }
  });
});

describe("FedEx through the simulator", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const look = (n: string) => sb.backends.lookup(fedex, n).then((r) => r.snapshot);
  const kind = (n: string) =>
    sb.backends.lookup(fedex, n).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );
  const tokenCalls = () => sb.sim.calls("fedex", "oauth/token");

  test("token caching: 100 parallel lookups of different numbers → one token request", async () => {
    const numbers = Array.from({ length: 100 }, (_, i) => `5${String(i).padStart(10, "0")}0`);
    const snaps = await Promise.all(numbers.map(look));
    expect(snaps.every((s) => newest(s.checkpoints).state === "delivered")).toBe(true);
    expect(tokenCalls()).toBe(1);
  });

  test("an expired token → one refresh, shared by parallel lookups", async () => {
    clock.advance(FEDEX_TOKEN_SECONDS * 1000);
    await Promise.all(["611111111110", "611111111120", "611111111130"].map(look));
    expect(tokenCalls()).toBe(2);
  });

  test("a token the server forgot → 401 → one refresh, lookup succeeds", async () => {
    sb.sim.reset(); // drops the twin's issued tokens
    const before = tokenCalls(); // reset also cleared the counters
    expect(before).toBe(0);
    expect(newest((await look("622222222220")).checkpoints).state).toBe("delivered");
    expect(tokenCalls()).toBe(1);
  });

  test("0: delivered, full history", async () => {
    const snap = await look("123456789010");
    expect(snap.checkpoints).toHaveLength(7);
    expect(newest(snap.checkpoints).state).toBe("delivered");
    expect(snap.summary?.state).toBe("delivered");
  });

  test("1: in transit, one checkpoint per step until delivered (token refreshed on the way)", async () => {
    const n = "123456789011";
    const states: string[] = [];
    for (let i = 0; i <= 4; i++) {
      const snap = await look(n);
      states.push(`${snap.checkpoints.length}:${newest(snap.checkpoints).state}`);
      clock.advance(3_600_000);
    }
    expect(states).toEqual(["3:in_transit", "4:in_transit", "5:in_transit", "6:out_for_delivery", "7:delivered"]);
  });

  test("2: out for delivery, next step delivered", async () => {
    const n = "123456789012";
    expect(newest((await look(n)).checkpoints).state).toBe("out_for_delivery");
    clock.advance(3_600_000);
    expect(newest((await look(n)).checkpoints).state).toBe("delivered");
  });

  test("3: failed attempt with remark, then return to shipper, then returned", async () => {
    const n = "123456789013";
    const first = newest((await look(n)).checkpoints);
    expect([first.state, first.subStatus, first.remark]).toEqual([
      "exception",
      "delivery_attempt_failed",
      "Consignee not available",
    ]);
    clock.advance(3_600_000);
    const second = newest((await look(n)).checkpoints);
    expect([second.state, second.subStatus]).toEqual(["exception", "rto_in_transit"]);
    clock.advance(3_600_000);
    expect(newest((await look(n)).checkpoints).state).toBe("returned");
  });

  test("4 → not_found (per-number error in a 200), 5 → timeout, 6 → backend", async () => {
    expect(await Promise.all(["123456789014", "123456789015", "123456789016"].map(kind))).toEqual([
      "not_found",
      "timeout",
      "backend",
    ]);
  });

  test("7: label created, no scans → pending, empty table", async () => {
    const snap = await look("123456789017");
    expect(snap.checkpoints).toEqual([]);
    expect(snap.summary?.state).toBe("pending");
  });

  test("8: cancelled", async () => {
    expect(newest((await look("123456789018")).checkpoints).state).toBe("cancelled");
  });
});

describe("FedEx estimated delivery (EDD)", () => {
  test("samples: the committed standardTransitTimeWindow when the estimate window is {} (real answers), the estimate window's end when given", () => {
    // track.json: the shipment with the newest scan (delivered 26 Apr) is used; its committed date is the 26th, as written (-06:00).
    expect(parseFedex(sample("fedex/track.json"), "776094337676").estimatedDelivery).toBe("2024-04-26");
    expect(parseFedex(sample("fedex/track-delivered.json"), "738488882438").estimatedDelivery).toBe("2024-08-21");
    // The OpenAPI example answers a per-number error for its second number, so its first trackResult is read directly.
    const example = JSON.parse(sample("fedex/track-openapi-example.json")).output.completeTrackResults[0]
      .trackResults[0];
    expect(fedexEstimate(example)).toBe("2021-10-15");
  });

  test("order: estimate window, then dateAndTimes ESTIMATED_DELIVERY, then the committed window; end before start; the date as written in its offset", () => {
    const committed = { window: { ends: "2024-04-25T10:30:00-07:00" } };
    expect(
      fedexEstimate({
        estimatedDeliveryTimeWindow: { window: { begins: "2024-04-27T08:00:00", ends: "2024-04-27T23:30:00-07:00" } },
        dateAndTimes: [{ type: "ESTIMATED_DELIVERY", dateTime: "2024-04-28T12:00:00-07:00" }],
        standardTransitTimeWindow: committed,
      }),
    ).toBe("2024-04-27");
    expect(fedexEstimate({ estimatedDeliveryTimeWindow: { window: { begins: "2024-04-29T08:00:00-07:00" } } })).toBe(
      "2024-04-29",
    );
    expect(
      fedexEstimate({
        estimatedDeliveryTimeWindow: { window: {} },
        dateAndTimes: [
          { type: "ACTUAL_PICKUP", dateTime: "2024-04-24T16:05:00-07:00" },
          { type: "ESTIMATED_DELIVERY", dateTime: "2024-04-28T12:00:00-07:00" },
        ],
        standardTransitTimeWindow: committed,
      }),
    ).toBe("2024-04-28");
    expect(fedexEstimate({ estimatedDeliveryTimeWindow: { window: {} }, standardTransitTimeWindow: committed })).toBe(
      "2024-04-25",
    );
    expect(fedexEstimate({ estimatedDeliveryTimeWindow: { window: { ends: "soon" } } })).toBeNull();
    expect(fedexEstimate({})).toBeNull();
  });

  test("through the simulator: the estimate in transit, the committed date kept once delivered; none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("fedex", (d) => `12345678901${d}`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: EDD_COMMON.inTransit.edd },
      returned: { state: "returned", edd: null },
    });
  });
});
