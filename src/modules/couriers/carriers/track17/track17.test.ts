import { afterAll, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../lib/clock.ts";
import { parseTrack17, parseTrack17Register, track17Adapter, track17Rule } from "./adapter.ts";
import { asyncPollDelayMs as track17Backoff } from "../../../../domain/limits.ts";
import { CourierError, type AdapterContext } from "../../adapters/types.ts";
import type { TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { createCourierHttp } from "../../http.ts";
import { courierBySlug } from "../../catalogue.ts";
import { kindOf, newest } from "../../../../../test/helpers/courier.ts";
import { sandboxBackends } from "../../../../../test/helpers/backends.ts";
import { EDD_COMMON, eddJourney } from "../../../../../test/helpers/edd.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

const indiapost = present(courierBySlug("indiapost"));
const webhookEntry = () => JSON.parse(sample("track17/webhook-tracking-updated.json")).data;
const gettrackinfo = (entry: unknown) => JSON.stringify({ code: 0, data: { accepted: [entry], rejected: [] } });

describe("17TRACK samples", () => {
  test("track17/webhook-tracking-updated.json track_info: one AvailableForPickup event, latest status Exception_Other", () => {
    const out = parseTrack17(sample("track17/webhook-tracking-updated.json"), "1234567890") as TrackingSnapshot;
    expect(out.checkpoints).toHaveLength(1);
    const n = present(out.checkpoints[0]);
    expect([n.state, n.subStatus, n.rawCode]).toEqual(["out_for_delivery", "ready_for_pickup", "AvailableForPickup"]);
    expect([n.localDate, n.localTime, n.at]).toEqual(["2022-09-14", "08:47", "2022-09-14T07:47:00.000Z"]);
    expect(n.location).toBe("Germany");
    expect(out.summary).toMatchObject({
      state: "exception",
      rawCode: "Exception_Other",
      at: "2022-09-14T07:47:00.000Z",
    });
    expect(out.remark).toBe(
      "The shipment is available for pick-up from the retail outlet retail outlet Valentinskamp 88 20355 Hamburg as of now.",
    );
    expect(out.podUrl).toBeNull();
  });

  test("the same entry inside a gettrackinfo envelope parses the same", () => {
    const out = parseTrack17(gettrackinfo(webhookEntry()), "1234567890") as TrackingSnapshot;
    expect(out.checkpoints).toHaveLength(1);
  });

  test("track17/register.json: accepted number passes; the rejected -18010012 number → invalid_number", () => {
    expect(kindOf(() => parseTrack17Register(sample("track17/register.json"), "RR123456789CN"))).toBe("ok");
    expect(kindOf(() => parseTrack17Register(sample("track17/register.json"), "1234"))).toBe("invalid_number");
  });

  test("already registered (-18019901) is fine", () => {
    const body = JSON.stringify({
      code: 0,
      data: {
        accepted: [],
        rejected: [{ number: "EE123456780IN", error: { code: -18019901, message: "has been registered" } }],
      },
    });
    expect(kindOf(() => parseTrack17Register(body, "EE123456780IN"))).toBe("ok");
  });

  test("track17/stoptrack-rejected.json shape: -18019902 (not registered yet) and a bare accepted entry mean keep polling", () => {
    expect(parseTrack17(sample("track17/stoptrack-rejected.json"), "21213123123230")).toBe("pending");
    expect(parseTrack17(sample("track17/stoptrack-rejected.json"), "RR123456789CN")).toBe("pending");
  });

  test("NotFound: pending until a provider synced; synced with no events → not_found; NotFound_InvalidCode → invalid_number", () => {
    const entry = webhookEntry();
    entry.track_info.latest_status = { status: "NotFound", sub_status: "NotFound_Other", sub_status_descr: null };
    entry.track_info.tracking.providers[0].events = [];
    expect(kindOf(() => parseTrack17(gettrackinfo(entry), "1234567890"))).toBe("not_found");
    entry.track_info.tracking.providers[0].latest_sync_status = null;
    expect(parseTrack17(gettrackinfo(entry), "1234567890")).toBe("pending");
    entry.track_info.tracking.providers = [];
    expect(parseTrack17(gettrackinfo(entry), "1234567890")).toBe("pending");
    entry.track_info = null;
    expect(parseTrack17(gettrackinfo(entry), "1234567890")).toBe("pending");
    const invalid = webhookEntry();
    invalid.track_info.latest_status = { status: "NotFound", sub_status: "NotFound_InvalidCode" };
    invalid.track_info.tracking.providers[0].events = [];
    expect(kindOf(() => parseTrack17(gettrackinfo(invalid), "1234567890"))).toBe("invalid_number");
  });

  test("envelope errors: bad key → auth, quota → rate_limited, others → backend", () => {
    const env = (code: number) => JSON.stringify({ code, data: { errors: [{ code, message: "x" }] } });
    expect(kindOf(() => parseTrack17(env(-18010002), "1"))).toBe("auth");
    expect(kindOf(() => parseTrack17(env(-18019908), "1"))).toBe("rate_limited");
    expect(kindOf(() => parseTrack17(env(-18010003), "1"))).toBe("backend");
  });

  test("status / sub-status mapping per `fixtures/SOURCE.md`", () => {
    const st = (sub: string, status: string) => {
      const r = track17Rule(sub, status, "");
      return r.sub ? `${r.state}/${r.sub}` : r.state;
    };
    expect(st("NotFound_Other", "NotFound")).toBe("pending");
    expect(st("InfoReceived", "InfoReceived")).toBe("pending/info_received");
    expect(st("InTransit_PickedUp", "InTransit")).toBe("in_transit/picked_up");
    expect(st("InTransit_CustomsProcessing", "InTransit")).toBe("in_transit");
    expect(st("AvailableForPickup_Other", "AvailableForPickup")).toBe("out_for_delivery/ready_for_pickup");
    expect(st("OutForDelivery_Other", "OutForDelivery")).toBe("out_for_delivery");
    expect(st("DeliveryFailure_NoBody", "DeliveryFailure")).toBe("exception/delivery_attempt_failed");
    expect(st("Delivered_Other", "Delivered")).toBe("delivered");
    expect(st("Exception_Returning", "Exception")).toBe("exception/rto_in_transit");
    expect(st("Exception_Returned", "Exception")).toBe("returned/rto_delivered");
    expect(st("Exception_Cancel", "Exception")).toBe("cancelled");
    expect(st("Exception_Security", "Exception")).toBe("exception");
    expect(st("Expired_Other", "Expired")).toBe("exception/expired");
    expect(st("", "")).toBe("in_transit");
    // Event stages.
    expect(st("", "Arrival")).toBe("in_transit/reached_destination");
    expect(st("", "Returned")).toBe("returned/rto_delivered");
  });

  test.each([
    "",
    "<html>502</html>",
    '{"code":0}',
    '{"code":0,"data":{"accepted":[{"number":"1","track_info":{"latest_status":{"status":"InTransit"},"tracking":{"providers":[{"events":[{"time_iso":5}]}]}}}]}}',
    '{"code":0,"da',
  ])("hostile body %p → classified, never a crash", (body) => {
    try {
      const out = parseTrack17(body, "1");
      if (out !== "pending") expect(out.checkpoints).toEqual([]);
    } catch (e) {
      expect(e).toBeInstanceOf(CourierError);
    }
  });
});

describe("17TRACK requests (loopback)", () => {
  test("register then poll gettrackinfo with 17token and [{number, carrier}], backing off 1 s, 2 s", async () => {
    const seen: { path: string; token: string | null; type: string | null; body: unknown }[] = [];
    let polls = 0;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const path = new URL(req.url).pathname;
        seen.push({
          path,
          token: req.headers.get("17token"),
          type: req.headers.get("content-type"),
          body: await req.json(),
        });
        if (path.endsWith("/register"))
          return new Response(sample("track17/register.json").replace("RR123456789CN", "EE123456780IN"));
        polls++;
        if (polls < 3)
          return Response.json({
            code: 0,
            data: { accepted: [{ number: "EE123456780IN", carrier: 9021, track_info: null }], rejected: [] },
          });
        return new Response(gettrackinfo({ ...webhookEntry(), number: "EE123456780IN" }));
      },
    });
    const http = createCourierHttp({
      baseUrl: `http://127.0.0.1:${server.port}/base`,
      timeoutMs: 2000,
      connections: 2,
    });
    const sleeps: number[] = [];
    const ctx: AdapterContext = {
      courier: indiapost,
      http,
      credentials: { TRACK17_API_KEY: "key-17" },
      signal: AbortSignal.timeout(5000),
      now: () => Date.now(),
      sleep: async (ms) => void sleeps.push(ms),
    };
    try {
      const snap = await track17Adapter.track("EE123456780IN", ctx);
      expect(snap.checkpoints).toHaveLength(1);
      expect(seen.map((s) => s.path)).toEqual([
        "/base/track/v2.2/register",
        "/base/track/v2.2/gettrackinfo",
        "/base/track/v2.2/gettrackinfo",
        "/base/track/v2.2/gettrackinfo",
      ]);
      expect(seen.every((s) => s.token === "key-17" && s.type === "application/json")).toBe(true);
      expect(
        seen.every((s) => JSON.stringify(s.body) === JSON.stringify([{ number: "EE123456780IN", carrier: 9021 }])),
      ).toBe(true);
      expect(sleeps).toEqual([1000, 2000]);
      expect(track17Adapter.async).toBe(true);
      expect([0, 1, 2, 10].map(track17Backoff)).toEqual([1000, 2000, 3000, 5000]);
    } finally {
      await http.close();
      server.stop(true);
    }
  });

  test.each([
    [401, '{"code":-18010002,"data":{"errors":[{"code":-18010002,"message":"The access key is invalid."}]}}', "auth"],
    [200, '{"code":-18010002,"data":{"errors":[{"code":-18010002,"message":"The access key is invalid."}]}}', "auth"],
    [403, "Forbidden", "rate_limited"],
    [429, "{}", "rate_limited"],
    [500, "{}", "backend"],
    [200, "<html>?</html>", "backend"],
  ])("HTTP %d %p → %s", async (status, body, kind) => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body, { status }) });
    const http = createCourierHttp({ baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 2000, connections: 2 });
    const ctx: AdapterContext = {
      courier: indiapost,
      http,
      credentials: { TRACK17_API_KEY: "k" },
      signal: AbortSignal.timeout(5000),
      now: () => Date.now(),
      sleep: (ms) => Bun.sleep(ms),
    };
    try {
      expect(
        await track17Adapter.track("EE123456780IN", ctx).then(
          () => "ok",
          (e: CourierError) => e.kind,
        ),
      ).toBe(kind);
    } finally {
      await http.close();
      server.stop(true);
    }
  });
});

describe("17TRACK through the simulator: the asynchronous path", () => {
  const clock = new FakeClock();
  const sb = sandboxBackends(clock);
  afterAll(() => sb.close());
  const lookup = (slug: string, n: string) =>
    sb.backends.lookup(present(courierBySlug(slug)), n).then((r) => r.snapshot);
  const kind = (slug: string, n: string) =>
    sb.backends.lookup(present(courierBySlug(slug)), n).then(
      () => "ok",
      (e: CourierError) => e.kind,
    );

  test("digit 9 of direct couriers resolves through 17TRACK polling: in transit", async () => {
    const [dhl, fedex, ups] = await Promise.all([
      lookup("dhl", "1234567899"),
      lookup("fedex", "123456789019"),
      lookup("ups", "1Z12345E0205271689"),
    ]);
    for (const snap of [dhl, fedex, ups]) {
      expect(snap.checkpoints).toHaveLength(3);
      expect(newest(snap.checkpoints).state).toBe("in_transit");
      expect(snap.summary?.state).toBe("in_transit");
    }
    expect(sb.sim.calls("track17", "register:1234567899")).toBe(1);
    expect(sb.sim.calls("track17", "gettrackinfo:1234567899")).toBeGreaterThanOrEqual(2); // at least one "not ready" answer
    expect(sb.sim.calls("dhl", "1234567899")).toBe(0);
  });

  test("digit 0 of aggregated couriers (indiapost, usps, dpd): delivered with full history", async () => {
    const snaps = await Promise.all([
      lookup("indiapost", "EE123456780IN"),
      lookup("usps", "9400123456789012345670"),
      lookup("dpd", "01234567890120"),
    ]);
    for (const snap of snaps) {
      expect(snap.checkpoints).toHaveLength(7);
      const n = newest(snap.checkpoints);
      expect(n.state).toBe("delivered");
      expect(n.localTime).toMatch(/^\d{2}:\d{2}$/);
      expect(snap.summary?.state).toBe("delivered");
    }
    // Registered already: the next lookup's register is rejected as a repeat, which is fine, and answers at once.
    expect(newest((await lookup("indiapost", "EE123456780IN")).checkpoints).state).toBe("delivered");
    expect(sb.sim.calls("track17", "register:EE123456780IN")).toBe(2);
  });

  test("other digits through the aggregator: 3 exception, 4 not_found, 5 timeout, 6 backend, 7 pending/empty, 8 cancelled", async () => {
    const [three, four, five, six, seven, eight] = await Promise.all([
      lookup("indiapost", "EE123456783IN"),
      kind("indiapost", "EE123456784IN"),
      kind("indiapost", "EE123456785IN"),
      kind("indiapost", "EE123456786IN"),
      lookup("indiapost", "EE123456787IN"),
      lookup("indiapost", "EE123456788IN"),
    ]);
    const n3 = newest(three.checkpoints);
    expect([n3.state, n3.subStatus]).toEqual(["exception", "delivery_attempt_failed"]);
    expect(n3.remark).toContain("Consignee not available");
    expect([four, five, six]).toEqual(["not_found", "timeout", "backend"]);
    expect(seven.checkpoints).toEqual([]);
    expect(seven.summary?.state).toBe("pending");
    expect(newest(eight.checkpoints).state).toBe("cancelled");
  });
});

describe("17TRACK: an answer later than the budget → timeout", () => {
  const sb = sandboxBackends(new FakeClock(), { SANDBOX_ASYNC_SECONDS: "30", COURIER_ASYNC_BUDGET_MS: "1500" });
  afterAll(() => sb.close());

  test("polling is cut off by the budget and reported as timeout", async () => {
    const got = await sb.backends.lookup(present(courierBySlug("dpd")), "01234567890120").then(
      () => "ok",
      (e: CourierError) => e.kind,
    );
    expect(got).toBe("timeout");
    expect(sb.sim.calls("track17", "gettrackinfo:01234567890120")).toBeGreaterThanOrEqual(1);
  });
});

describe("17TRACK estimated delivery (EDD)", () => {
  test("sample: time_metrics.estimated_delivery_date with null from/to → no EDD", () => {
    expect(
      (parseTrack17(sample("track17/webhook-tracking-updated.json"), "1234567890") as TrackingSnapshot)
        .estimatedDelivery,
    ).toBeNull();
  });

  test("a window (the 17TRACK docs' delivered example: source Official) → its end, dated in its own offset; else its start", () => {
    const doc = JSON.parse(sample("track17/webhook-tracking-updated.json"));
    const metrics = doc.data.track_info.time_metrics;
    metrics.estimated_delivery_date = {
      source: "Official",
      from: "2022-05-01T08:00:00-04:00",
      to: "2022-05-03T20:00:00-04:00",
    };
    expect((parseTrack17(JSON.stringify(doc), "1234567890") as TrackingSnapshot).estimatedDelivery).toBe("2022-05-03");
    metrics.estimated_delivery_date = { source: "Official", from: "2022-05-01", to: null };
    expect((parseTrack17(JSON.stringify(doc), "1234567890") as TrackingSnapshot).estimatedDelivery).toBe("2022-05-01");
    metrics.estimated_delivery_date = null;
    expect((parseTrack17(JSON.stringify(doc), "1234567890") as TrackingSnapshot).estimatedDelivery).toBeNull();
  });

  test("through the simulator (indiapost via the aggregator): the window from pickup on, kept once delivered; none while manifested, cancelled or returning", async () => {
    const seen = await eddJourney("indiapost", (d) => `EE12345678${d}IN`);
    expect(seen).toEqual({
      ...EDD_COMMON,
      delivered: { state: "delivered", edd: EDD_COMMON.inTransit.edd },
      returned: { state: "returned", edd: null },
    });
  }, 30_000);
});
