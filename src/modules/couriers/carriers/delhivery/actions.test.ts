/**
 * The Delhivery action adapter (actions.ts; README.md, "NDR actions") against the recorded-shape fixtures and a
 * loopback courier: the wire bodies it sends, the UPL answer, the status API's pending / decided answers, the Cancel
 * Order API, and a 400 read as a rejection; never the internet.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { delhiveryActions, ndrBody, parseCancelAnswer, parseNdrAnswer, parseUplStatus } from "./actions.ts";
import { DelhiveryNdrRequest } from "./wire.ts";
import { createCourierHttp } from "../../http.ts";
import { courierBySlug } from "../../catalogue.ts";
import type { AdapterContext } from "../../adapters/types.ts";
import { sample } from "../../../../../test/helpers/samples.ts";
import { present } from "../../../../../test/helpers/present.ts";

describe("recorded shapes", () => {
  test("the documented request body is what ndrBody builds, and the wire schema admits it", () => {
    const doc = JSON.parse(sample("delhivery/ndr-update-request.json"));
    expect(Value.Check(DelhiveryNdrRequest, doc)).toBe(true);
    expect(ndrBody({ action: "reattempt", trackingNumber: "278382" })).toEqual({ data: [doc.data[2]] });
    expect(
      ndrBody({ action: "defer_delivery", trackingNumber: "1823821", deferredDate: "2017-12-28" }).data[0],
    ).toEqual(doc.data[0]);
    expect(
      ndrBody({
        action: "update_consignee",
        trackingNumber: "3278213",
        consignee: { name: "name1", address: "add1", phone: "2132341412" },
      }).data[0],
    ).toEqual(doc.data[1]);
  });

  test("the UPL answer, the status API pending and decided, the cancellation both ways", () => {
    expect(parseNdrAnswer(sample("delhivery/ndr-update-upl.json"))).toEqual({
      status: "requested",
      reference: "UPL10575891229462827496",
    });
    expect(parseUplStatus(sample("delhivery/upl-status-pending.json"), "278382").status).toBe("requested");
    const done = sample("delhivery/upl-status-complete.json");
    expect(parseUplStatus(done, "278382").status).toBe("accepted");
    expect(parseUplStatus(done, "1823821")).toMatchObject({
      status: "rejected",
      reason: "deferred_date exceeds max_dfd_allowed 2017-12-26",
    });
    // A waybill the answer does not list is undecided, never accepted.
    expect(parseUplStatus(done, "999").status).toBe("requested");
    expect(parseCancelAnswer(sample("delhivery/cancel-success.json")).status).toBe("accepted");
    expect(parseCancelAnswer(sample("delhivery/cancel-refused.json"))).toMatchObject({
      status: "rejected",
      reason: "Shipment cannot be cancelled in Dispatched status",
    });
  });
});

describe("against a loopback courier", () => {
  const seen: { method: string; path: string; auth: string | null; body: string }[] = [];
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        seen.push({
          method: req.method,
          path: url.pathname + url.search,
          auth: req.headers.get("authorization"),
          body: await req.text(),
        });
        if (url.pathname === "/api/p/update")
          return seen.at(-1)?.body.includes("BAD")
            ? Response.json({ error: "Invalid waybill" }, { status: 400 })
            : new Response(sample("delhivery/ndr-update-upl.json"));
        if (url.pathname.startsWith("/api/cmu/get_bulk_upl/"))
          return new Response(sample("delhivery/upl-status-complete.json"));
        if (url.pathname === "/api/p/edit") return new Response(sample("delhivery/cancel-success.json"));
        return new Response("no", { status: 404 });
      },
    });
  });
  afterAll(() => server.stop(true));
  const ctx = (): AdapterContext => ({
    courier: present(courierBySlug("delhivery")),
    http: createCourierHttp({ baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 5_000, connections: 2 }),
    credentials: { DELHIVERY_TOKEN: "tok" },
    signal: new AbortController().signal,
    now: () => Date.now(),
    sleep: async () => {},
  });

  test("re-attempt: POST /api/p/update with the token, then the UPL polled to accepted", async () => {
    const req = { action: "reattempt" as const, trackingNumber: "278382" };
    expect(await delhiveryActions.submit(req, ctx())).toEqual({
      status: "requested",
      reference: "UPL10575891229462827496",
    });
    expect(seen.at(-1)).toMatchObject({ method: "POST", path: "/api/p/update", auth: "Token tok" });
    expect(JSON.parse(seen.at(-1)?.body ?? "")).toEqual({ data: [{ waybill: "278382", act: "RE-ATTEMPT" }] });
    const polled = await delhiveryActions.poll?.("UPL10575891229462827496", req, ctx());
    expect(polled?.status).toBe("accepted");
    expect(seen.at(-1)?.path).toBe("/api/cmu/get_bulk_upl/UPL10575891229462827496?verbose=true");
  });

  test("return to origin: the Cancel Order API, answered at once; a 400 from the NDR API is a rejection", async () => {
    const a = await delhiveryActions.submit({ action: "return_to_origin", trackingNumber: "278382" }, ctx());
    expect(a.status).toBe("accepted");
    expect(JSON.parse(seen.at(-1)?.body ?? "")).toEqual({ waybill: "278382", cancellation: "true" });
    const bad = await delhiveryActions.submit({ action: "reattempt", trackingNumber: "BAD" }, ctx());
    expect(bad).toEqual({ status: "rejected", reference: null, reason: "Invalid waybill" });
  });
});
