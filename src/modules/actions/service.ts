/**
 * NDR actions (docs/ndr-actions.md): eligibility before any courier call, the request stored as an outbox row
 * (sent by job.ts), the account's list. Consignee details and the note are encrypted at rest (SECRETS_KEY, the
 * action id bound), shown masked only, and never logged.
 */
import type { AppDeps } from "../../deps.ts";
import type { AuthContext } from "../accounts/service.ts";
import { AppError, RequestValidationError } from "../../lib/errors.ts";
import { checkEligibility, maskConsignee, type Consignee, type Refusal } from "../../domain/actions.ts";
import type { PlanId } from "../../domain/plans.ts";
import type { ShipmentState, SubStatus } from "../../domain/states.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import { courierBySlug, normaliseTrackingNumber } from "../couriers/catalogue.ts";
import { encryptSecret } from "../../secrets/cipher.ts";
import type { SecretsKey } from "../../secrets/key.ts";
import { openForRotation, type RotationReport } from "../accounts/secret-rotation.ts";
import { newId } from "../../lib/ids.ts";
import { actionView, type ActionCreateInput, type ActionRowJson, type ShipmentAction } from "./model.ts";
import { defined } from "../../lib/defined.ts";

/** Associated data binding an action's encrypted details to it. */
export const detailsAad = (actionId: string) => `act:${actionId}`;

/** Today in India (IST, UTC+05:30), `YYYY-MM-DD`: the calendar of every courier with an action API. */
const istToday = (nowMs: number) => new Date(nowMs + 330 * 60_000).toISOString().slice(0, 10);

export interface Followed {
  id: string;
  courier: string;
  tracking_number: string;
  state: ShipmentState;
  sub_status: SubStatus | null;
  checkpoints: StoredCheckpoint[];
}

/** The followed shipment. @throws AppError SHIPMENT_NOT_FOLLOWED (404) */
export async function followed(
  deps: Pick<AppDeps, "db">,
  accountId: string,
  slug: string,
  raw: string,
): Promise<Followed> {
  const courier = courierBySlug(slug.trim().toLowerCase());
  const n = normaliseTrackingNumber(raw);
  const rows = courier
    ? ((await deps.db.$client`
        select s.id, s.courier, s.tracking_number, s.state, s.sub_status, shipment_history(s) as checkpoints
        from shipments s join follows f on f.shipment_id = s.id and f.account_id = ${accountId}
        where s.courier = ${courier.slug} and s.tracking_number = ${n} limit 1`) as unknown as Followed[])
    : [];
  if (!rows[0])
    throw new AppError(
      "SHIPMENT_NOT_FOLLOWED",
      `This account does not follow ${slug.slice(0, 64)} ${n.slice(0, 64)}; follow it with POST /v1/shipments or GET /v1/track.`,
    );
  return rows[0];
}

/** The refusal as the API answers it: 422 for what the request itself asks wrongly, 409 for the shipment's state, 403 for the plan. */
function refuse(r: Refusal): never {
  if (r.code === "ACTION_NOT_ELIGIBLE") throw new AppError("ACTION_NOT_ELIGIBLE", r.message, { rule: r.rule });
  if (r.code === "PLAN_UPGRADE_REQUIRED") throw new AppError("PLAN_UPGRADE_REQUIRED", r.message, { rule: r.rule });
  const loc =
    r.rule === "deferred_date"
      ? ["body", "deferred_date"]
      : r.rule.startsWith("consignee")
        ? ["body", "consignee"]
        : ["body", "action"];
  throw new RequestValidationError([{ loc, msg: r.message, type: r.code.toLowerCase() }]);
}

/**
 * Checks and stores one action for the courier (202: `requested`); job.ts sends it.
 * @throws AppError SHIPMENT_NOT_FOLLOWED (404), PLAN_UPGRADE_REQUIRED (403), ACTION_NOT_ELIGIBLE / ACTION_IN_PROGRESS
 *   (409); RequestValidationError (422: `action_not_supported`, `action_date_out_of_range`, `action_invalid`)
 */
export async function requestAction(
  deps: Pick<AppDeps, "db" | "clock" | "backends" | "secretsKey">,
  auth: AuthContext,
  slug: string,
  rawNumber: string,
  input: ActionCreateInput,
): Promise<ShipmentAction> {
  const s = await followed(deps, auth.account.id, slug, rawNumber);
  const courier = defined(courierBySlug(s.courier), `courier ${s.courier}`);
  const consignee = input.consignee as Consignee | undefined;
  const now = deps.clock.now();
  const refusal = checkEligibility(deps.backends.actionRules(courier), {
    action: input.action,
    plan: auth.account.plan as PlanId,
    state: s.state,
    subStatus: s.sub_status,
    checkpoints: s.checkpoints,
    deferredDate: input.deferred_date,
    consignee,
    today: istToday(now),
  });
  if (refusal) refuse(refusal);
  const id = newId("act");
  const details = { ...(consignee ? { consignee } : {}), ...(input.note ? { note: input.note } : {}) };
  const enc = Object.keys(details).length
    ? encryptSecret(deps.secretsKey, detailsAad(id), JSON.stringify(details))
    : null;
  const masked = consignee ? { consignee: maskConsignee(consignee) } : null;
  const at = new Date(now).toISOString();
  // One statement: a second action while one awaits the courier inserts nothing.
  const rows = (await deps.db.$client`
    insert into shipment_actions (id, account_id, shipment_id, action, status, stage, deferred_date, details_enc,
      details_masked, due_at, requested_at, updated_at)
    select ${id}, ${auth.account.id}, ${s.id}, ${input.action}, 'requested', 'sending', ${input.deferred_date ?? null},
      ${enc}, ${masked ? JSON.stringify(masked) : null}::jsonb, ${at}, ${at}, ${at}
    where not exists (select 1 from shipment_actions where shipment_id = ${s.id} and account_id = ${auth.account.id}
      and status = 'requested')
    returning id, action, status, courier_reference, reason, deferred_date::text as deferred_date, details_masked, requested_at, updated_at`) as unknown as ActionRowJson[];
  if (!rows[0]) {
    const [busy] = (await deps.db.$client`
      select id from shipment_actions where shipment_id = ${s.id} and account_id = ${auth.account.id}
        and status = 'requested' limit 1`) as unknown as { id: string }[];
    throw new AppError(
      "ACTION_IN_PROGRESS",
      `Action ${busy?.id ?? ""} on this shipment is still awaiting ${courier.name}'s answer; GET its actions to follow it.`,
      { rule: "one_at_a_time" },
    );
  }
  return actionView(rows[0]);
}

/** The account's actions on a followed shipment, newest first. @throws AppError SHIPMENT_NOT_FOLLOWED (404) */
export async function listActions(
  deps: Pick<AppDeps, "db">,
  accountId: string,
  slug: string,
  rawNumber: string,
): Promise<ShipmentAction[]> {
  const s = await followed(deps, accountId, slug, rawNumber);
  return actionsOf(deps, accountId, s.id);
}

/** The account's actions on shipment `shipmentId`, newest first (at most 50). */
export async function actionsOf(deps: Pick<AppDeps, "db">, accountId: string, shipmentId: string) {
  const rows = (await deps.db.$client`
    select id, action, status, courier_reference, reason, deferred_date::text as deferred_date, details_masked, requested_at, updated_at
    from shipment_actions
    where shipment_id = ${shipmentId} and account_id = ${accountId}
    order by requested_at desc, id desc limit 50`) as unknown as ActionRowJson[];
  return rows.map(actionView);
}

/** Deletes the account's actions on a shipment it stops following (their consignee details go with them). */
export async function deleteActionsOf(db: AppDeps["db"], accountId: string, courier: string, trackingNumber: string) {
  await db.$client`delete from shipment_actions a using shipments s
    where s.id = a.shipment_id and s.courier = ${courier} and s.tracking_number = ${trackingNumber}
      and a.account_id = ${accountId}`;
}

/**
 * Retention (housekeeping, RETENTION_DAYS): final actions last updated before `cutoffMs` are deleted with their
 * encrypted details; returns how many.
 */
export async function pruneActions(deps: Pick<AppDeps, "db">, cutoffMs: number): Promise<number> {
  const rows = await deps.db.$client`
    delete from shipment_actions where status <> 'requested' and updated_at < ${new Date(cutoffMs).toISOString()}
    returning 1`;
  return rows.length;
}

/**
 * `bun run rotate-secrets`: re-encrypts every action's consignee details under the new SECRETS_KEY (those only the
 * previous key opens); a row neither key opens counts as failed and is left as it is.
 */
export async function reencryptActionDetails(db: AppDeps["db"], key: SecretsKey): Promise<RotationReport> {
  const report: RotationReport = { reEncrypted: 0, alreadyCurrent: 0, failed: 0 };
  const rows = (await db.$client`
    select id, details_enc from shipment_actions where details_enc is not null`) as unknown as {
    id: string;
    details_enc: string;
  }[];
  for (const r of rows) {
    const plain = openForRotation(key, detailsAad(r.id), r.details_enc);
    if (plain === "current") report.alreadyCurrent++;
    else if (plain === undefined) report.failed++;
    else {
      await db.$client`update shipment_actions set details_enc = ${encryptSecret(key, detailsAad(r.id), plain)}
        where id = ${r.id} and details_enc = ${r.details_enc}`;
      report.reEncrypted++;
    }
  }
  return report;
}
