/**
 * Per-webhook sequences under concurrent fan-out from two processes (docs/webhooks.md, "Sequence numbers"): two
 * child processes, each with its own connection pool and 8 concurrent transactions, fan out 1,260 events (60 rolled
 * back) to one webhook at once; then two ROLE=worker service processes deliver them to a loopback receiver. The
 * stored sequences are exactly 1..N, and the receiver saw each of them in `X-Webhook-Sequence`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createAccount } from "../../src/modules/accounts/service.ts";
import { webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { generateSecret } from "../../src/modules/webhooks/secrets.ts";
import { encryptSecret } from "../../src/secrets/cipher.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";
import { shipment } from "../webhooks/fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { freePort, spawnService, type Proc } from "./process.ts";

const PER_PROCESS = 630;
const BARRIER = 7_241_029;
let tdb: TestDatabase;
let receiver: Receiver;
const procs: Proc[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase({ max: 3 });
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  receiver?.stop();
  await tdb?.drop();
});

test("two processes fanning out to one webhook at once: sequences 1..N, no gaps or duplicates, all on the wire", async () => {
  const acc = await createAccount(tdb.db, { email: `seq2-${Date.now()}@example.com`, plan: "business" });
  const secretsKey = randomBytes(32);
  await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(secretsKey, acc.id, generateSecret())} where id = ${acc.id}`;
  const id = newId("wh");
  await tdb.db
    .insert(webhooks)
    .values({ id, accountId: acc.id, url: receiver.url("/seq"), events: ["tracking.in_transit"], mode: "live" });
  const shp = await shipment(tdb.db, [acc.id]);

  // Both children block on the barrier until this connection lets go, so their transactions overlap.
  const gate = await tdb.sql.reserve();
  await gate`select pg_advisory_lock(${BARRIER})`;
  const env = {
    DATABASE_URL: tdb.url,
    SHIPMENT_ID: shp,
    EVENTS: String(PER_PROCESS),
    LANES: "8",
    BARRIER: String(BARRIER),
    LOG_LEVEL: "silent",
  };
  const children = [0, 1].map(() => spawnService(env, "test/ops/fan-out-child.ts"));
  procs.push(...children);
  const waiting = async () =>
    Number(
      (
        await tdb.sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${BARRIER} and not granted`
      )[0]!.n,
    );
  const deadline = Date.now() + 60_000;
  while ((await waiting()) < 2) {
    if (Date.now() > deadline) throw new Error(children.map((c) => c.stderr()).join("\n---\n"));
    await Bun.sleep(50);
  }
  await gate`select pg_advisory_unlock(${BARRIER})`;
  gate.release();
  expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0]);
  const reports = children.map((c) => JSON.parse(c.stdout().trim().split("\n").at(-1)!));
  const committed = reports.reduce((s, r) => s + r.committed, 0);
  expect(reports.reduce((s, r) => s + r.rolledBack, 0)).toBe(60);
  expect(committed).toBe(2 * PER_PROCESS - 60);

  const stored = (await tdb.sql`select sequence from deliveries where webhook_id = ${id} order by sequence`).map((r) =>
    Number(r.sequence),
  );
  expect(stored).toEqual(Array.from({ length: committed }, (_, i) => i + 1));

  // Two delivery workers share the outbox; every sequence reaches the receiver.
  const common = {
    ...(await webhookEnv()),
    DATABASE_URL: tdb.url,
    SECRETS_KEY: secretsKey.toString("base64url"),
    LOG_LEVEL: "warn",
    DB_DEADLINE_SECONDS: "30",
  };
  for (let i = 0; i < 2; i++) procs.push(spawnService({ ...common, ROLE: "worker", ADMIN_PORT: String(freePort()) }));
  const sequences = () => new Set(receiver.on("/seq").map((r) => Number(r.headers["x-webhook-sequence"])));
  expect(await eventually(() => sequences().size >= committed, 120_000)).toBe(true);
  const seen = sequences();
  expect(seen.size).toBe(committed);
  expect(Math.min(...seen)).toBe(1);
  expect(Math.max(...seen)).toBe(committed);
  // Delivery is at least once: a sequence may arrive again only as a later attempt (a retry after a timeout on a
  // loaded machine), never as the same attempt sent by both workers.
  const attempts = receiver
    .on("/seq")
    .map((r) => `${r.headers["x-webhook-sequence"]}|${r.headers["x-webhook-delivery"]}`);
  expect(new Set(attempts).size).toBe(attempts.length);
}, 240_000);
