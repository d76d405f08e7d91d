/**
 * Sends due NDR actions to their couriers and polls asynchronous ones (docs/ndr-actions.md, "Sending"): claims
 * `shipment_actions` rows whose `due_at` has come (the claim engine, a lease), calls the courier through
 * its budget, and records the answer; a final status writes `tracking.action_updated` for the requesting account.
 * {@link processDueActions} drains them on the job runner; the scheduler's loop only calls it.
 */
import { sql as dsql } from "drizzle-orm";
import { defineQueue } from "../../jobs/queue.ts";
import { createRunner } from "../../jobs/runner.ts";
import type { AppDeps } from "../../deps.ts";
import { CourierError, type ActionAnswer, type ActionRequest } from "../couriers/adapters/types.ts";
import { courierBySlug } from "../couriers/catalogue.ts";
import { decryptSecret } from "../../secrets/cipher.ts";
import { newId } from "../../lib/ids.ts";
import { writeActionEvent } from "../following/action-events.ts";
import type { ActionName, Consignee } from "../../domain/actions.ts";
import { detailsAad } from "./service.ts";
import { defined } from "../../lib/defined.ts";

/** How long a claim holds a row (ms): longer than a courier call's budget. */
const ACTION_LEASE_MS = 60_000;
/** Sending is retried this many times (retryable failures), then the action is `failed`. */
const MAX_SEND_ATTEMPTS = 8;
/** An asynchronous courier that has not decided after this long (ms) leaves the action `failed`. */
const POLL_GIVE_UP_MS = 48 * 3_600_000;

/** Delay before send attempt `n + 1` after `n` failures (ms): 30 s doubling, at most 1 h. */
const sendBackoffMs = (n: number) => Math.min(3_600_000, 30_000 * 2 ** Math.max(0, n - 1));
/** Delay before poll `n + 1` (ms): 10 s doubling, at most 10 min (Delhivery decides UPLs within minutes). */
const pollDelayMs = (n: number) => Math.min(600_000, 10_000 * 2 ** Math.max(0, n));

interface Claimed {
  id: string;
  account_id: string;
  shipment_id: string;
  action: ActionName;
  stage: "sending" | "polling";
  courier_reference: string | null;
  deferred_date: string | null;
  details_enc: string | null;
  attempts: number;
  requested_at: string;
  courier: string;
  tracking_number: string;
}

type Outcome =
  | { final: true; status: "accepted" | "rejected" | "failed"; reference: string | null; reason: string | null }
  | { final: false; stage: "sending" | "polling"; reference: string | null; attempts: number; dueInMs: number };

/** The due actions on the claim engine (src/jobs/queue.ts): due rows in due order, a lease stamped as they are locked. */
const actionQueue = defineQueue<Claimed>("shipment_actions", {
  key: "id",
  returning: `q.id, q.account_id, q.shipment_id, q.action, q.stage, q.courier_reference,
    q.deferred_date::text as deferred_date, q.details_enc, q.attempts, to_json(q.requested_at)#>>'{}' as requested_at,
    (select s.courier from shipments s where s.id = q.shipment_id) as courier,
    (select s.tracking_number from shipments s where s.id = q.shipment_id) as tracking_number`,
});

/** Claims up to `limit` due actions for `owner`. @throws on DB errors */
function claim(deps: Pick<AppDeps, "db">, owner: string, nowMs: number, limit: number): Promise<Claimed[]> {
  return actionQueue.claim(deps.db.$client, { nowMs, limit, leaseMs: ACTION_LEASE_MS, owner });
}

function requestOf(deps: Pick<AppDeps, "secretsKey">, r: Claimed): ActionRequest {
  const details = r.details_enc
    ? (JSON.parse(decryptSecret(deps.secretsKey, detailsAad(r.id), r.details_enc)) as {
        consignee?: Consignee;
        note?: string;
      })
    : {};
  return {
    action: r.action,
    trackingNumber: r.tracking_number,
    ...(r.deferred_date ? { deferredDate: r.deferred_date } : {}),
    ...(details.consignee ? { consignee: details.consignee } : {}),
  };
}

/** What to record after one courier call (or its failure) for row `r`. */
function outcomeOf(r: Claimed, nowMs: number, answer: ActionAnswer | CourierError): Outcome {
  if (answer instanceof CourierError) {
    if (!answer.retryable)
      return {
        final: true,
        status: "failed",
        reference: r.courier_reference,
        reason: `Courier refused the call (${answer.kind})`,
      };
    const attempts = r.attempts + 1;
    if (r.stage === "sending" && attempts >= MAX_SEND_ATTEMPTS)
      return {
        final: true,
        status: "failed",
        reference: null,
        reason: `Courier unreachable after ${attempts} attempts (${answer.kind})`,
      };
    const dueInMs = r.stage === "sending" ? sendBackoffMs(attempts) : pollDelayMs(attempts);
    return { final: false, stage: r.stage, reference: r.courier_reference, attempts, dueInMs };
  }
  if (answer.status !== "requested")
    return {
      final: true,
      status: answer.status,
      reference: answer.reference ?? r.courier_reference,
      reason: answer.reason ?? null,
    };
  const reference = answer.reference ?? r.courier_reference;
  if (!reference)
    return { final: true, status: "failed", reference: null, reason: "The courier gave no request id to follow" };
  if (nowMs - Date.parse(r.requested_at) > POLL_GIVE_UP_MS)
    return { final: true, status: "failed", reference, reason: "No decision from the courier within 48 hours" };
  const polls = r.stage === "polling" ? r.attempts + 1 : 0;
  return { final: false, stage: "polling", reference, attempts: polls, dueInMs: pollDelayMs(polls) };
}

/** Records an outcome while the lease is ours; a final one writes the event in the same transaction. */
async function record(deps: Pick<AppDeps, "db" | "onEvents">, r: Claimed, owner: string, o: Outcome, nowMs: number) {
  const now = new Date(nowMs).toISOString();
  await deps.db.transaction(async (tx) => {
    if (!o.final) {
      await tx.execute(dsql`update shipment_actions set stage = ${o.stage}, courier_reference = ${o.reference},
        attempts = ${o.attempts}, due_at = ${new Date(nowMs + o.dueInMs).toISOString()}, lease_until = null, lease_owner = null
        where id = ${r.id} and lease_owner = ${owner}`);
      return;
    }
    const done = (await tx.execute(dsql`update shipment_actions set status = ${o.status}, stage = null,
        courier_reference = ${o.reference}, reason = ${o.reason}, due_at = null, lease_until = null, lease_owner = null,
        updated_at = ${now}
      where id = ${r.id} and lease_owner = ${owner} returning id`)) as unknown as unknown[];
    if (done.length > 0)
      await writeActionEvent(deps, tx, { actionId: r.id, shipmentId: r.shipment_id, accountId: r.account_id }, nowMs);
  });
}

/** One due action: the courier call (through its budget), then its outcome recorded. @throws on DB errors */
async function act(
  deps: Pick<AppDeps, "db" | "clock" | "log" | "backends" | "secretsKey" | "onEvents">,
  r: Claimed,
  owner: string,
): Promise<void> {
  const courier = defined(courierBySlug(r.courier), `courier ${r.courier}`);
  let answer: ActionAnswer | CourierError;
  try {
    const req = requestOf(deps, r);
    answer = await deps.backends.act(courier, req, r.stage === "polling" ? (r.courier_reference ?? "") : undefined);
  } catch (err) {
    answer = err instanceof CourierError ? err : new CourierError("backend", "action failed");
    // The action and the courier only: the request holds consignee data, never logged.
    deps.log.warn("ndr action call failed", { action_id: r.id, courier: r.courier, kind: answer.kind });
  }
  await record(deps, r, owner, outcomeOf(r, deps.clock.now(), answer), deps.clock.now());
}

/**
 * Sends or polls every due action on the job runner (src/jobs/runner.ts; at most `limit` per claim, claims repeated
 * until none is due); returns how many were claimed. Courier failures are recorded per action (retried with
 * back-off); an outcome the database refuses is logged and its action retried when the lease runs out.
 * @throws when a claim fails
 */
export function processDueActions(
  deps: Pick<AppDeps, "db" | "clock" | "log" | "backends" | "secretsKey" | "onEvents">,
  opts: { owner?: string; limit?: number } = {},
): Promise<number> {
  const owner = opts.owner ?? `actions-${process.pid}-${newId("req").slice(-8)}`;
  const log = deps.log.child({ component: "actions" });
  const runner = createRunner<Claimed>({
    name: "actions",
    clock: deps.clock,
    log,
    concurrency: opts.limit ?? 20,
    prefetch: 0,
    refillAt: 1,
    maxWaitMs: ACTION_LEASE_MS / 2,
    claim: (limit, nowMs) => claim(deps, owner, nowMs, limit),
    task: (r) =>
      act(deps, r, owner).catch((e) =>
        log.error("ndr action outcome not recorded; retried when its lease runs out", {
          action_id: r.id,
          error: e as Error,
        }),
      ),
    release: (rows) =>
      actionQueue
        .release(
          deps.db.$client,
          rows.map((r) => r.id),
          owner,
          deps.clock.now(),
        )
        .catch(() => 0),
  });
  return runner.drain();
}
