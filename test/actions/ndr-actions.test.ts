/**
 * NDR actions end to end (docs/ndr-actions.md) against the real app, database, sandbox Delhivery twin and a loopback
 * webhook receiver: refusals before any courier call, each action through the twin in Delhivery's wire format to
 * accepted or rejected, the shipment moving on, `tracking.action_updated` only where subscribed, idempotency, and
 * consignee values nowhere in clear (logs, events, payloads, the database).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { createLogger } from "../../src/lib/log.ts";
import { processDueActions } from "../../src/modules/actions/job.ts";
import { ActionListResponse, ActionResponse } from "../../src/modules/actions/model.ts";
import { detailsAad, reencryptActionDetails } from "../../src/modules/actions/service.ts";
import { decryptSecretWith } from "../../src/secrets/cipher.ts";
import { ACTION_COUNTER } from "../../src/modules/couriers/carriers/delhivery/twin-actions.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

const resolver: Resolver = async (host) => {
  if (host !== "receiver.test") throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
  return [{ address: "127.0.0.1", family: 4 }];
};

const lines: string[] = [];
let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv(), { log: createLogger("debug", {}, (l) => void lines.push(l)) });
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps, resolver });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

// Sandbox Delhivery numbers: last digit 3 = a failed attempt; the two digits before it pick its NSL code
// (20 EOD-11 unavailable, 21 EOD-6 refused, 22 EOD-74 bad address, 27 RT-104 damaged); the digit before the last,
// even, makes a re-attempt deliver, odd fail again.
const HOUR = 3_600_000;
let n = 0;
/** A fresh number of family `fam` (digit 3), unique per test so the simulator's first sight is now. */
const awb = (fam: number) => `9${String(++n).padStart(9, "0")}${fam}3`;

async function followed(plan: "business" | "starter" = "business", numbers: string[] = []) {
  const acc = await ctx.account(plan);
  for (const x of numbers) {
    const [res] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${x}`, { key: acc.key });
    expect(res.status).toBe(200);
  }
  return acc;
}
const act = (key: string, number: string, body: unknown, headers: Record<string, string> = {}, courier = "delhivery") =>
  ctx.call(`/v1/shipments/${courier}/${number}/actions`, { key, method: "POST", body: JSON.stringify(body), headers });
const actions = async (key: string, number: string) => {
  const [res, body] = await ctx.call(`/v1/shipments/delhivery/${number}/actions`, { key });
  expect(res.status).toBe(200);
  expect(Value.Check(ActionListResponse, body)).toBe(true);
  return body.data.actions as { id: string; status: string; courier_reference: string | null; reason?: string }[];
};
const track = async (key: string, number: string) => {
  const [res, body] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${number}`, { key });
  expect(res.status).toBe(200);
  return body.data as { ShipmentState: string; Checkpoints: unknown[] };
};
/** Sends what is due, lets the twin decide (SANDBOX_ASYNC_SECONDS = 1), polls again: the action's final status. */
async function settle(key: string, number: string) {
  await processDueActions(ctx.deps);
  ctx.clock.advance(11_000);
  await processDueActions(ctx.deps);
  return (await actions(key, number))[0]!;
}
const istDay = (ms: number) => new Date(ms + 330 * 60_000).toISOString().slice(0, 10);
const plusDays = (day: string, k: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10);

describe("eligibility, before any courier call", () => {
  test("state, status code, date window, plan, unsupported courier: each refused with its rule, the twin untouched", async () => {
    const inTransit = `9${String(++n).padStart(9, "0")}11`;
    const damaged = awb(27);
    const unavailable = awb(20);
    const acc = await followed("business", [inTransit, damaged, unavailable]);

    const [r1, b1] = await act(acc.key, inTransit, { action: "reattempt" });
    expect(r1.status).toBe(409);
    expect(b1.error).toMatchObject({ code: "ACTION_NOT_ELIGIBLE", rule: "state" });

    const [r2, b2] = await act(acc.key, damaged, { action: "reattempt" });
    expect(r2.status).toBe(409);
    expect(b2.error.code).toBe("ACTION_NOT_ELIGIBLE");

    const today = istDay(ctx.clock.now());
    const [r3, b3] = await act(acc.key, unavailable, { action: "defer_delivery", deferred_date: plusDays(today, 10) });
    expect(r3.status).toBe(422);
    expect(b3.detail[0]).toMatchObject({ loc: ["body", "deferred_date"], type: "action_date_out_of_range" });
    const [r4, b4] = await act(acc.key, unavailable, { action: "defer_delivery", deferred_date: today });
    expect(r4.status).toBe(422);
    expect(b4.detail[0].type).toBe("action_date_out_of_range");

    const [r5, b5] = await act(acc.key, unavailable, { action: "update_consignee", consignee: { pincode: "560001" } });
    expect(r5.status).toBe(422);
    expect(b5.detail[0].type).toBe("action_not_supported");

    const starter = await followed("starter", [unavailable]);
    const [r6, b6] = await act(starter.key, unavailable, { action: "reattempt" });
    expect(r6.status).toBe(403);
    expect(b6.error.code).toBe("PLAN_UPGRADE_REQUIRED");

    const dtdc = courierBySlug("dtdc")!.awb.example;
    const [f] = await ctx.call("/v1/shipments", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({ shipments: [{ courier: "dtdc", tracking_number: dtdc }] }),
    });
    expect(f.status).toBe(202);
    const [r7, b7] = await act(acc.key, dtdc, { action: "return_to_origin" }, {}, "dtdc");
    expect(r7.status).toBe(422);
    expect(b7.detail[0]).toMatchObject({ loc: ["body", "action"], type: "action_not_supported" });

    const [r8] = await act(acc.key, "1234567890111", { action: "reattempt" });
    expect(r8.status).toBe(404);

    for (const x of [inTransit, damaged, unavailable]) expect(ctx.sim.calls(ACTION_COUNTER, x)).toBe(0);
    expect(await actions(acc.key, unavailable)).toEqual([]);
    await processDueActions(ctx.deps);
    for (const x of [inTransit, damaged, unavailable]) expect(ctx.sim.calls(ACTION_COUNTER, x)).toBe(0);
  });

  test("/v1/couriers lists each courier's actions", async () => {
    const acc = await ctx.account("business");
    const [res, body] = await ctx.call("/v1/couriers", { key: acc.key });
    expect(res.status).toBe(200);
    const by = Object.fromEntries(
      body.data.couriers.map((c: { slug: string; actions: string[] }) => [c.slug, c.actions]),
    );
    expect(by.delhivery).toEqual(["reattempt", "defer_delivery", "update_consignee", "return_to_origin"]);
    expect(by.dtdc).toEqual([]);
  });
});

describe("through the Delhivery twin", () => {
  test("re-attempt: 202 requested, the UPL polled, accepted; the event reaches the subscribed webhook only; the shipment is delivered", async () => {
    const number = awb(20);
    const acc = await followed("business", [number]);
    const other = await followed("business", [number]);
    for (const [a, path, events] of [
      [acc, "/mine", ["tracking.action_updated"]],
      [acc, "/mine-unsubscribed", ["tracking.delivered"]],
      [other, "/other", ["tracking.action_updated"]],
    ] as const) {
      const [wh] = await ctx.call("/v1/webhooks", {
        key: a.key,
        method: "POST",
        body: JSON.stringify({ url: rx.url(path).replace("127.0.0.1", "receiver.test"), events, mode: "live" }),
      });
      expect(wh.status).toBe(201);
    }
    const [res, body] = await act(acc.key, number, { action: "reattempt" });
    expect(res.status).toBe(202);
    expect(Value.Check(ActionResponse, body)).toBe(true);
    expect(body.data).toMatchObject({ action: "reattempt", status: "requested", courier_reference: null });

    await processDueActions(ctx.deps);
    expect(ctx.sim.calls(ACTION_COUNTER, number)).toBe(1);
    const [pending] = await actions(acc.key, number);
    expect(pending!.status).toBe("requested");
    expect(pending!.courier_reference).toMatch(/^UPL\d+$/);

    ctx.clock.advance(11_000);
    expect(await processDueActions(ctx.deps)).toBe(1);
    const [done] = await actions(acc.key, number);
    expect(done!.status).toBe("accepted");
    expect(await actions(other.key, number)).toEqual([]);
    const [stored, storedBody] = await ctx.call(`/v1/shipments/delhivery/${number}`, { key: acc.key });
    expect(stored.status).toBe(200);
    expect(storedBody.actions).toEqual([done]);

    await worker.runOnce();
    const got = rx.on("/mine");
    expect(got.length).toBe(1);
    const payload = JSON.parse(got[0]!.text);
    expect(payload.event).toBe("tracking.action_updated");
    expect(payload.data.action).toMatchObject({ id: done!.id, action: "reattempt", status: "accepted" });
    expect(rx.on("/mine-unsubscribed").length).toBe(0);
    expect(rx.on("/other").length).toBe(0);

    // A new attempt a step later; the digit before the last (0) is even: delivered.
    ctx.clock.advance(3 * HOUR);
    const after = await track(acc.key, number);
    expect(after.ShipmentState).toBe("delivered");
  });

  test("re-attempt of an odd number fails again; a second action while one awaits the courier is 409", async () => {
    const number = awb(21); // EOD-6 refused; digit before the last is 1
    const acc = await followed("business", [number]);
    expect((await act(acc.key, number, { action: "reattempt" }))[0].status).toBe(202);
    const [busy, busyBody] = await act(acc.key, number, { action: "return_to_origin" });
    expect(busy.status).toBe(409);
    expect(busyBody.error).toMatchObject({ code: "ACTION_IN_PROGRESS", rule: "one_at_a_time" });
    expect((await settle(acc.key, number)).status).toBe("accepted");
    ctx.clock.advance(3 * HOUR);
    const after = await track(acc.key, number);
    expect(after.ShipmentState).toBe("exception");
  });

  test("defer delivery within the window: accepted, delivered on the deferred day", async () => {
    const number = awb(22);
    const acc = await followed("business", [number]);
    const today = istDay(ctx.clock.now());
    const [res] = await act(acc.key, number, { action: "defer_delivery", deferred_date: plusDays(today, 2) });
    expect(res.status).toBe(202);
    const done = await settle(acc.key, number);
    expect(done).toMatchObject({ status: "accepted", deferred_date: plusDays(today, 2) });
    ctx.clock.advance(3 * 24 * HOUR);
    expect((await track(acc.key, number)).ShipmentState).toBe("delivered");
  });

  test("update consignee: sent as EDIT_DETAILS, accepted, shown masked; no value in clear in logs, payloads or the database", async () => {
    const number = awb(22);
    const acc = await followed("business", [number]);
    const [wh] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({
        url: rx.url("/pii").replace("127.0.0.1", "receiver.test"),
        events: ["tracking.action_updated"],
        mode: "live",
      }),
    });
    expect(wh.status).toBe(201);
    const secret = { name: "Zebulon Quixote", phone: "9876501234", address: "Flat 7 Marigold Residency Indiranagar" };
    const [res, body] = await act(
      acc.key,
      number,
      { action: "update_consignee", consignee: secret, note: "Call Zebulon first" },
      { "idempotency-key": `pii-${number}` },
    );
    expect(res.status).toBe(202);
    expect(body.data.consignee.phone).toBe("98******34");
    const [again, againBody] = await act(
      acc.key,
      number,
      { action: "update_consignee", consignee: secret, note: "Call Zebulon first" },
      { "idempotency-key": `pii-${number}` },
    );
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(againBody.data.id).toBe(body.data.id);
    expect((await actions(acc.key, number)).length).toBe(1);

    expect((await settle(acc.key, number)).status).toBe("accepted");
    await worker.runOnce();
    const got = rx.on("/pii");
    expect(got.length).toBe(1);

    const dump = (
      (await ctx.deps.db.$client`
        select string_agg(t.row, ' ') as all from (
          select to_jsonb(a)::text as row from shipment_actions a
          union all select to_jsonb(e)::text from events e
          union all select to_jsonb(d)::text from deliveries d
          union all select to_jsonb(k)::text from idempotency_keys k) t`) as unknown as { all: string }[]
    )[0]!.all;
    for (const v of [...Object.values(secret), "Zebulon", "9876501234"]) {
      expect(dump).not.toContain(v);
      expect(lines.join("\n")).not.toContain(v);
      expect(got[0]!.text).not.toContain(v);
    }
    const [ev, evBody] = await ctx.call("/v1/events?type=tracking.action_updated", { key: acc.key });
    expect(ev.status).toBe(200);
    expect(JSON.stringify(evBody)).not.toContain("9876501234");

    // A SECRETS_KEY rotation moves the details to the new key (bun run rotate-secrets); a second run finds them current.
    const next = Object.assign(crypto.getRandomValues(new Uint8Array(32)), { previous: ctx.deps.secretsKey });
    const first = await reencryptActionDetails(ctx.deps.db, next);
    expect(first.failed).toBe(0);
    expect(first.reEncrypted).toBeGreaterThanOrEqual(1);
    expect((await reencryptActionDetails(ctx.deps.db, next)).reEncrypted).toBe(0);
    const [row] = (await ctx.deps.db.$client`
      select details_enc from shipment_actions where id = ${body.data.id}`) as unknown as { details_enc: string }[];
    expect(JSON.parse(decryptSecretWith(next, detailsAad(body.data.id), row!.details_enc)).consignee).toEqual(secret);
  });

  test("return to origin: the Cancel Order API answers at once, accepted; the shipment returns; a second RTO is refused by our check", async () => {
    const number = awb(20);
    const acc = await followed("business", [number]);
    expect((await act(acc.key, number, { action: "return_to_origin" }))[0].status).toBe(202);
    await processDueActions(ctx.deps);
    const [done] = await actions(acc.key, number);
    expect(done!.status).toBe("accepted");
    ctx.clock.advance(3 * HOUR);
    expect((await track(acc.key, number)).ShipmentState).toBe("returned");
    const [again, againBody] = await act(acc.key, number, { action: "return_to_origin" });
    expect(again.status).toBe(409);
    expect(againBody.error.rule).toBe("state");
  });

  test("the twin rejects what Delhivery rejects: a re-attempt after the script has moved on is rejected, with its remark", async () => {
    const number = awb(20);
    const acc = await followed("business", [number]);
    expect((await act(acc.key, number, { action: "reattempt" }))[0].status).toBe(202);
    // The script's next step (return to origin) happens before the request reaches the courier.
    ctx.clock.advance(HOUR + 1000);
    const done = await settle(acc.key, number);
    expect(done.status).toBe("rejected");
    expect(done.reason).toContain("Pending");
  });
});
