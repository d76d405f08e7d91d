/**
 * The merchant's own `reference` and `metadata` on a follow, against the real app, database and a real HTTPS
 * receiver on loopback: a bulk follow with them, then the list (and its `reference` filter), the stored read,
 * `GET /v1/events` and a real webhook delivery (the signed bytes) all carry the receiving account's own; PATCH
 * changes them (with Idempotency-Key); the 422 `detail` locations of every limit; another account's follow of the
 * same AWB unaffected.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { EventListResponse } from "../../src/modules/events/model.ts";
import {
  ShipmentListResponse,
  StoredShipmentResponse,
  UpdateShipmentResponse,
} from "../../src/modules/shipments/model.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { shipmentRow } from "../following/helpers.ts";
import { emit } from "../webhooks/fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

const resolver: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps, resolver });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

const post = (key: string, shipments: unknown[]) =>
  ctx.call("/v1/shipments", { method: "POST", key, body: JSON.stringify({ shipments }) });
const patch = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  ctx.call(`/v1/shipments/${path}`, { method: "PATCH", key, headers, body: JSON.stringify(body) });

/** A business account with one live webhook on the receiver at its own path. */
async function merchant() {
  const acc = await ctx.account("business");
  const path = `/m-${acc.id}`;
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: rx.url(path), events: ["tracking.in_transit", "tracking.updated"], mode: "live" }),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  return { ...acc, path, secret: body.data.secret as string };
}

describe("reference and metadata through every read and a real delivery", () => {
  test("two accounts following one AWB each see their own in the list, the filter, the stored read, events and the signed webhook body", async () => {
    const a = await merchant();
    const b = await merchant();
    const awb = "4100000000011";
    const [r1, f1] = await post(a.key, [
      {
        courier: "delhivery",
        tracking_number: awb,
        reference: "ORD-A-1",
        metadata: { channel: "web", "shop.id": "7" },
      },
      { courier: "delhivery", tracking_number: "4100000000021" },
    ]);
    expect(r1.status).toBe(202);
    expect(f1.data.accepted).toBe(2);
    const [, f2] = await post(b.key, [{ courier: "delhivery", tracking_number: awb, reference: "B-77" }]);
    expect(f2.data.accepted).toBe(1);

    // The list: each item carries them; a follow without any reads null and {}.
    const [lr, list] = await ctx.call("/v1/shipments", { key: a.key });
    expect(lr.status).toBe(200);
    expect(Value.Check(ShipmentListResponse, list)).toBe(true);
    const byAwb = Object.fromEntries(
      list.data.shipments.map((s: { tracking_number: string }) => [s.tracking_number, s]),
    );
    expect(byAwb[awb]).toMatchObject({ reference: "ORD-A-1", metadata: { channel: "web", "shop.id": "7" } });
    expect(byAwb["4100000000021"]).toMatchObject({ reference: null, metadata: {} });

    // The filter is exact and per account.
    const [, hit] = await ctx.call("/v1/shipments?reference=ORD-A-1", { key: a.key });
    expect(hit.data.shipments.map((s: { tracking_number: string }) => s.tracking_number)).toEqual([awb]);
    const [, miss] = await ctx.call("/v1/shipments?reference=ord-a-1", { key: a.key });
    expect(miss.data.shipments).toEqual([]);
    const [, other] = await ctx.call("/v1/shipments?reference=ORD-A-1", { key: b.key });
    expect(other.data.shipments).toEqual([]);
    const [, bHit] = await ctx.call("/v1/shipments?reference=B-77", { key: b.key });
    expect(bHit.data.shipments[0]).toMatchObject({ tracking_number: awb, reference: "B-77", metadata: {} });

    // The stored read: the tracking data unchanged, the follow's own data beside it.
    const [sr, stored] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: a.key });
    expect(sr.status).toBe(200);
    expect(Value.Check(StoredShipmentResponse, stored)).toBe(true);
    expect(stored.follow).toEqual({
      reference: "ORD-A-1",
      metadata: { channel: "web", "shop.id": "7" },
      public_url: expect.any(String),
    });
    expect(stored.data.Reference).toBeUndefined();
    const [, storedB] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: b.key });
    expect(storedB.follow).toEqual({ reference: "B-77", metadata: {}, public_url: expect.any(String) });

    // One event, fanned out to both accounts' webhooks: each delivery carries its own account's follow data.
    const shp = (await shipmentRow(ctx, "delhivery", awb))!;
    expect(await emit(ctx.tdb.db, shp.id, "tracking.in_transit", new Date(ctx.clock.now()))).toBe(2);
    expect(await worker.runOnce()).toBe(2);
    for (const [acc, reference, metadata] of [
      [a, "ORD-A-1", { channel: "web", "shop.id": "7" }],
      [b, "B-77", {}],
    ] as const) {
      const [got] = rx.on(acc.path);
      expect(got!.json.data).toMatchObject({ tracking_number: awb, reference, metadata });
      // The signature covers the bytes that carry them.
      expect(got!.headers["x-service-signature"]).toBe(
        `sha256=${createHmac("sha256", acc.secret).update(got!.raw).digest("hex")}`,
      );
      expect(got!.text).toContain(JSON.stringify(reference));
    }

    // GET /v1/events: the same payload, with the listing account's own data.
    const [er, events] = await ctx.call(`/v1/events?tracking_number=${awb}`, { key: a.key });
    expect(er.status).toBe(200);
    expect(Value.Check(EventListResponse, events)).toBe(true);
    expect(events.data.events[0].payload.data).toMatchObject({
      reference: "ORD-A-1",
      metadata: { channel: "web", "shop.id": "7" },
    });
    const [, eventsB] = await ctx.call(`/v1/events?tracking_number=${awb}`, { key: b.key });
    expect(eventsB.data.events[0].payload.data).toMatchObject({ reference: "B-77", metadata: {} });
    // Each account's own public tracking page, in its deliveries and its events alike.
    expect(rx.on(a.path)[0]!.json.data.public_url).toBe(stored.follow.public_url);
    expect(rx.on(b.path)[0]!.json.data.public_url).toBe(storedB.follow.public_url);
    expect(eventsB.data.events[0].payload.data.public_url).toBe(storedB.follow.public_url);
    // The webhook's copy adds its own per-webhook `sequence`; the rest is the same payload.
    const { sequence, ...delivered } = rx.on(a.path)[0]!.json;
    expect(sequence).toBe(1);
    expect(events.data.events[0].payload).toEqual(delivered);

    // PATCH: a key set to null goes, a new key is set, the reference changes; B's follow is untouched.
    const [pr, patched] = await patch(a.key, `delhivery/${awb}`, {
      reference: "ORD-A-2",
      metadata: { channel: null, priority: "high" },
    });
    expect(pr.status).toBe(200);
    expect(Value.Check(UpdateShipmentResponse, patched)).toBe(true);
    expect(patched.data).toEqual({
      courier: "delhivery",
      tracking_number: awb,
      reference: "ORD-A-2",
      metadata: { "shop.id": "7", priority: "high" },
    });
    const [, storedB2] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: b.key });
    expect(storedB2.follow).toEqual({ reference: "B-77", metadata: {}, public_url: storedB.follow.public_url });

    // The next delivery (built from the freshest record) carries the new values.
    ctx.clock.advance(1000);
    expect(await emit(ctx.tdb.db, shp.id, "tracking.updated", new Date(ctx.clock.now()))).toBe(2);
    expect(await worker.runOnce()).toBe(2);
    expect(rx.on(a.path)[1]!.json.data).toMatchObject({
      reference: "ORD-A-2",
      metadata: { "shop.id": "7", priority: "high" },
    });
    expect(rx.on(b.path)[1]!.json.data).toMatchObject({ reference: "B-77", metadata: {} });
  });
});

describe("PATCH /v1/shipments/{courier}/{tracking_number}", () => {
  test("reference null clears it; fields not sent stay; 404 for a shipment the account does not follow; Idempotency-Key replays", async () => {
    const a = await ctx.account("free");
    const b = await ctx.account("free");
    await post(a.key, [
      { courier: "delhivery", tracking_number: "4200000000011", reference: "R1", metadata: { k: "v" } },
    ]);
    const [, kept] = await patch(a.key, "delhivery/4200000000011", { metadata: { k2: "v2" } });
    expect(kept.data).toMatchObject({ reference: "R1", metadata: { k: "v", k2: "v2" } });
    const [, cleared] = await patch(a.key, "delhivery/4200000000011", { reference: null });
    expect(cleared.data).toMatchObject({ reference: null, metadata: { k: "v", k2: "v2" } });
    const [, list] = await ctx.call("/v1/shipments", { key: a.key });
    expect(list.data.shipments[0]).toMatchObject({ reference: null, metadata: { k: "v", k2: "v2" } });

    const [nf, nfBody] = await patch(b.key, "delhivery/4200000000011", { reference: "mine" });
    expect(nf.status).toBe(404);
    expect(nfBody.error.code).toBe("SHIPMENT_NOT_FOLLOWED");
    const [unknownCourier] = await patch(a.key, "nosuchcourier/4200000000011", { reference: "x" });
    expect(unknownCourier.status).toBe(404);

    const [first, firstBody] = await patch(
      a.key,
      "delhivery/4200000000011",
      { reference: "R2" },
      { "Idempotency-Key": "patch-1" },
    );
    expect(first.status).toBe(200);
    // Changed meanwhile: a replay answers the stored response and does not run again.
    await patch(a.key, "delhivery/4200000000011", { reference: "R3" });
    const [again, againBody] = await patch(
      a.key,
      "delhivery/4200000000011",
      { reference: "R2" },
      { "Idempotency-Key": "patch-1" },
    );
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(againBody).toEqual(firstBody);
    const [, now] = await ctx.call("/v1/shipments/delhivery/4200000000011", { key: a.key });
    expect(now.follow.reference).toBe("R3");
    const [reused, reusedBody] = await patch(
      a.key,
      "delhivery/4200000000011",
      { reference: "R4" },
      { "Idempotency-Key": "patch-1" },
    );
    expect(reused.status).toBe(422);
    expect(reusedBody.detail[0]).toMatchObject({ loc: ["header", "Idempotency-Key"], type: "idempotency_key_reused" });
  });

  test("a change that would leave more than 20 keys is refused whole (422 at body.metadata); removing and adding in one call counts the result", async () => {
    const a = await ctx.account("free");
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, "v"]));
    const [, f] = await post(a.key, [{ courier: "delhivery", tracking_number: "4300000000011", metadata: twenty }]);
    expect(f.data.accepted).toBe(1);
    const [res, body] = await patch(a.key, "delhivery/4300000000011", { reference: "X", metadata: { extra: "v" } });
    expect(res.status).toBe(422);
    expect(body.detail).toEqual([{ loc: ["body", "metadata"], msg: expect.any(String), type: "too_long" }]);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/4300000000011", { key: a.key });
    expect(stored.follow).toEqual({ reference: null, metadata: twenty, public_url: expect.any(String) });
    const [ok, okBody] = await patch(a.key, "delhivery/4300000000011", { metadata: { k0: null, extra: "v" } });
    expect(ok.status).toBe(200);
    expect(Object.keys(okBody.data.metadata).length).toBe(20);
    expect(okBody.data.metadata.extra).toBe("v");
  });
});

describe("validation: the 422 detail with the exact loc", () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
  const emoji = (n: number) => "📦".repeat(n);

  test("POST items: 21 keys, a 41-character key, bad key characters, a 501-character value, a 129-character reference, an empty reference", async () => {
    const a = await ctx.account("free");
    const item = (extra: object) => ({ courier: "delhivery", tracking_number: "4400000000011", ...extra });
    const [res, body] = await post(a.key, [
      item({ metadata: keys(21) }),
      item({ metadata: { ["k".repeat(41)]: "v" } }),
      item({ metadata: { "bad key": "v" } }),
      item({ metadata: { ok: "x".repeat(501) } }),
      item({ reference: "r".repeat(129) }),
      item({ reference: "" }),
      item({ metadata: { ok: 5 } }),
      item({ metadata: ["a"] }),
    ]);
    expect(res.status).toBe(422);
    const at = (loc: unknown[]) =>
      body.detail.find((d: { loc: unknown[] }) => JSON.stringify(d.loc) === JSON.stringify(loc));
    expect(at(["body", "shipments", 0, "metadata"])).toBeDefined();
    expect(at(["body", "shipments", 1, "metadata", "k".repeat(41)])).toBeDefined();
    expect(at(["body", "shipments", 2, "metadata", "bad key"])).toBeDefined();
    expect(at(["body", "shipments", 3, "metadata", "ok"])).toMatchObject({ type: "string_too_long" });
    expect(at(["body", "shipments", 4, "reference"])).toMatchObject({ type: "string_too_long" });
    expect(at(["body", "shipments", 5, "reference"])).toMatchObject({ type: "string_too_short" });
    expect(at(["body", "shipments", 6, "metadata", "ok"])).toMatchObject({ type: "string_type" });
    expect(at(["body", "shipments", 7, "metadata"])).toBeDefined();
    expect(body.detail.length).toBe(8);
    // Nothing was followed.
    const [, list] = await ctx.call("/v1/shipments", { key: a.key });
    expect(list.data.shipments).toEqual([]);
  });

  test("lengths count characters: 128 emoji as a reference and 500 as a value pass, 129 and 501 do not", async () => {
    const a = await ctx.account("free");
    const [ok, okBody] = await post(a.key, [
      { courier: "delhivery", tracking_number: "4500000000011", reference: emoji(128), metadata: { e: emoji(500) } },
    ]);
    expect(ok.status).toBe(202);
    expect(okBody.data.accepted).toBe(1);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/4500000000011", { key: a.key });
    expect(stored.follow).toEqual({
      reference: emoji(128),
      metadata: { e: emoji(500) },
      public_url: expect.any(String),
    });
    const [, filtered] = await ctx.call(`/v1/shipments?reference=${encodeURIComponent(emoji(128))}`, { key: a.key });
    expect(filtered.data.shipments.length).toBe(1);

    const [bad, badBody] = await patch(a.key, "delhivery/4500000000011", {
      reference: emoji(129),
      metadata: { e: emoji(501) },
    });
    expect(bad.status).toBe(422);
    expect(badBody.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["body", "reference"],
      ["body", "metadata", "e"],
    ]);
    const [q, qBody] = await ctx.call(`/v1/shipments?reference=${encodeURIComponent(emoji(129))}`, { key: a.key });
    expect(q.status).toBe(422);
    expect(qBody.detail[0].loc).toEqual(["query", "reference"]);
  });

  test("PATCH: a bad key (the first one of an object is reported), a number as a value, an unknown field; a 41-character key", async () => {
    const a = await ctx.account("free");
    await post(a.key, [{ courier: "delhivery", tracking_number: "4600000000011" }]);
    const [res, body] = await patch(a.key, "delhivery/4600000000011", {
      metadata: { "bad/key": "v", ["k".repeat(41)]: null, n: 1 },
      order: "x",
    });
    expect(res.status).toBe(422);
    const locs = body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toContainEqual(["body", "metadata", "bad/key"]);
    expect(locs).toContainEqual(["body", "metadata", "n"]);
    expect(locs).toContainEqual(["body", "order"]);
    const [long, longBody] = await patch(a.key, "delhivery/4600000000011", { metadata: { ["k".repeat(41)]: null } });
    expect(long.status).toBe(422);
    expect(longBody.detail).toEqual([
      { loc: ["body", "metadata", "k".repeat(41)], msg: expect.any(String), type: expect.any(String) },
    ]);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/4600000000011", { key: a.key });
    expect(stored.follow).toEqual({ reference: null, metadata: {}, public_url: expect.any(String) });
  });
});
