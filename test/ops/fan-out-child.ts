/**
 * A child process for test/ops/sequence-workers.test.ts: it stores events and fans each out in one transaction, as a
 * worker's re-check does (test/webhooks/fixtures.ts `emit`), from LANES concurrent transactions on its own pool,
 * every 21st rolled back after its fan-out. It starts once the test releases the advisory lock BARRIER, so both
 * processes fan out at the same time. Prints `{ committed, rolledBack }` as its last line.
 */
import { connect } from "../../src/db/client.ts";
import { events } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { fanOutEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import { emit } from "../webhooks/fixtures.ts";

const env = (name: string) =>
  process.env[name] ??
  (() => {
    throw new Error(`${name} is required`);
  })();
const total = Number(env("EVENTS"));
const lanes = Number(env("LANES"));
const shipmentId = env("SHIPMENT_ID");
const { db, sql } = connect(env("DATABASE_URL"), { max: lanes + 1 });

const gate = await sql.reserve();
await gate`select pg_advisory_lock_shared(${Number(env("BARRIER"))})`;
await gate`select pg_advisory_unlock_shared(${Number(env("BARRIER"))})`;
gate.release();

let committed = 0;
let rolledBack = 0;
const at = new Date(Date.UTC(2026, 10, 5, 10, 0, 0));
await Promise.all(
  Array.from({ length: lanes }, async (_, lane) => {
    for (let i = lane; i < total; i += lanes) {
      if (i % 21 === 20) {
        await db
          .transaction(async (tx) => {
            const eventId = newId("evt");
            await tx
              .insert(events)
              .values({ id: eventId, shipmentId, type: "tracking.in_transit", status: "in_transit", enqueuedAt: at });
            await fanOutEvent(tx, { eventId, shipmentId, type: "tracking.in_transit", enqueuedAt: at });
            throw new Error("roll back");
          })
          .catch(() => rolledBack++);
      } else if ((await emit(db, shipmentId, "tracking.in_transit", at)) === 1) committed++;
    }
  }),
);
await sql.end({ timeout: 5 });
console.log(JSON.stringify({ committed, rolledBack }));
