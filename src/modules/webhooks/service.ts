/** Webhook CRUD, the plan gate and the secret-once semantics (spec: Webhook, /v1/webhooks…; docs/webhooks.md). */
import { and, asc, desc, eq, gt, gte, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import type { AppDeps } from "../../deps.ts";
import type { DbOrTx } from "../../db/client.ts";
import { deliveries, deliveryAttempts, webhooks } from "../../db/schema/index.ts";
import { lockWebhookSecret, storeWebhookSecret } from "../accounts/webhook-secret.ts";
import { recordAlert } from "../alerts/record.ts";
import { AppError } from "../../lib/errors.ts";
import { isId, newId } from "../../lib/ids.ts";
import { defined } from "../../lib/defined.ts";
import { planOf } from "../../domain/plans.ts";
import type { WebhookEventType } from "../../domain/events.ts";
import type { CreateWebhookInput, DELIVERY_STATUSES, UpdateWebhookInput } from "./model.ts";

type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
import { isoSecond } from "./delivery/payload.ts";
import { generateSecret } from "./secrets.ts";
import { encryptSecret } from "../../secrets/cipher.ts";
import { validateWebhookUrl } from "./url.ts";
import { sandboxEcho } from "../postman/echo.ts";
import { sealHeaders } from "./headers.ts";
import { dateTimeMs } from "../../http/text.ts";

/** Webhooks per account, then 409 WEBHOOK_LIMIT_REACHED (spec: Limits leaves it open; docs/spec-map.md, "Decisions"). */
export const MAX_WEBHOOKS = 10;

export const SECRET_NOTICE =
  "<secret already issued: it is shown only once; rotate it with POST /v1/webhooks/rotate-secret>";

export type WebhookRow = typeof webhooks.$inferSelect;
type ServiceDeps = Pick<AppDeps, "db" | "clock" | "config" | "secretsKey">;
interface Caller {
  id: string;
  plan: string;
}

/** The public webhook object (never a secret). */
export function webhookView(w: WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events as WebhookEventType[],
    mode: w.mode as "test" | "live",
    description: w.description ?? null,
    status: w.status as "active" | "deactivated",
    failure_count: w.failureCount,
    headers: w.headersMasked ?? {},
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

function planGate(plan: string): void {
  const p = planOf(plan);
  if (!p.live_webhooks)
    throw new AppError(
      "PLAN_UPGRADE_REQUIRED",
      `Live webhooks need a plan that includes them (Growth or Business); the ${p.name} plan has test webhooks only.`,
    );
}

const dedupe = (events: readonly string[]) => [...new Set(events)];

/**
 * Creates a webhook with `secret`: the raw one if this create made the account's first, else {@link SECRET_NOTICE}
 * (spec: POST /v1/webhooks). Throws RequestValidationError, AppError PLAN_UPGRADE_REQUIRED / WEBHOOK_LIMIT_REACHED.
 */
export async function createWebhook(deps: ServiceDeps, caller: Caller, input: CreateWebhookInput) {
  const url = validateWebhookUrl(
    input.url,
    ["body", "url"],
    deps.config.webhookAllowPrivateCidrs,
    sandboxEcho(deps.config)?.url,
  );
  if (input.mode === "live") planGate(caller.plan);
  const now = new Date(deps.clock.now());
  return deps.db.transaction(async (tx) => {
    // The account row lock: the limit count and the "first secret" decision cannot race.
    const acc = await lockWebhookSecret(tx, caller.id);
    if (!acc) throw new AppError("INVALID_API_KEY", "The API key is invalid or has been revoked.");
    const [{ n } = { n: 0 }] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(webhooks)
      .where(eq(webhooks.accountId, caller.id));
    if (n >= MAX_WEBHOOKS)
      throw new AppError(
        "WEBHOOK_LIMIT_REACHED",
        `An account can have at most ${MAX_WEBHOOKS} webhooks; delete one first.`,
      );
    const id = newId("wh");
    const [row] = await tx
      .insert(webhooks)
      .values({
        id,
        accountId: caller.id,
        url,
        events: dedupe(input.events),
        mode: input.mode,
        description: input.description ?? null,
        createdAt: now,
        updatedAt: now,
        ...sealHeaders(deps.secretsKey, id, input.headers ?? {}),
      })
      .returning();
    let secret = SECRET_NOTICE;
    if (!acc.enc) {
      secret = generateSecret();
      await storeWebhookSecret(tx, caller.id, encryptSecret(deps.secretsKey, caller.id, secret), now, {
        keepPrevious: false,
      });
    }
    return { ...webhookView(defined(row, "the inserted webhook")), secret };
  });
}

/**
 * Replaces the signing secret in one committed update, keeping the old one (spec: Delivery rules 7); returns the new
 * raw secret, shown once. Why: docs/webhooks.md#signing-secret-one-per-account.
 */
export async function rotateSecret(deps: ServiceDeps, accountId: string): Promise<string> {
  const secret = generateSecret();
  const now = new Date(deps.clock.now());
  await deps.db.transaction(async (tx) => {
    await lockWebhookSecret(tx, accountId);
    await storeWebhookSecret(tx, accountId, encryptSecret(deps.secretsKey, accountId, secret), now, {
      keepPrevious: true,
    });
    await recordAlert(tx, {
      accountId,
      kind: "secret_rotated",
      dedupeKey: now.toISOString(),
      details: { at: now.toISOString() },
      at: now.getTime(),
    });
  });
  return secret;
}

export async function listWebhooks(db: DbOrTx, accountId: string) {
  const rows = await db
    .select()
    .from(webhooks)
    .where(eq(webhooks.accountId, accountId))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id));
  return rows.map(webhookView);
}

/** The account's webhook `id`. @throws AppError WEBHOOK_NOT_FOUND (also for another account's id). */
export async function requireWebhook(db: DbOrTx, accountId: string, id: string): Promise<WebhookRow> {
  if (!isId("wh", id)) throw notFound(id);
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .limit(1);
  if (!row) throw notFound(id);
  return row;
}

const notFound = (id: string) =>
  new AppError("WEBHOOK_NOT_FOUND", `No webhook with id ${JSON.stringify(id.slice(0, 100))} on this account.`);

/**
 * Partial update (docs/spec-map.md, "Decisions"): `status: "active"` reactivates and resets the failure count; going
 * live passes the plan gate. Throws RequestValidationError, AppError WEBHOOK_NOT_FOUND / PLAN_UPGRADE_REQUIRED.
 */
export async function updateWebhook(deps: ServiceDeps, caller: Caller, id: string, input: UpdateWebhookInput) {
  const current = await requireWebhook(deps.db, caller.id, id);
  const url =
    input.url === undefined
      ? undefined
      : validateWebhookUrl(
          input.url,
          ["body", "url"],
          deps.config.webhookAllowPrivateCidrs,
          sandboxEcho(deps.config)?.url,
        );
  if (input.mode === "live" && current.mode !== "live") planGate(caller.plan);
  const patch: Partial<WebhookRow> = { updatedAt: new Date(deps.clock.now()) };
  if (url !== undefined) patch.url = url;
  if (input.events !== undefined) patch.events = dedupe(input.events);
  if (input.mode !== undefined) patch.mode = input.mode;
  if (input.description !== undefined) patch.description = input.description;
  if (input.status === "active") Object.assign(patch, { status: "active", failureCount: 0 });
  if (input.headers !== undefined) Object.assign(patch, sealHeaders(deps.secretsKey, id, input.headers ?? {}));
  const [row] = await deps.db
    .update(webhooks)
    .set(patch)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, caller.id)))
    .returning();
  if (!row) throw notFound(id);
  return webhookView(row);
}

/** Deletes the webhook; its deliveries (pending ones included) and attempt log go with it (FK cascade). */
export async function deleteWebhook(db: DbOrTx, accountId: string, id: string): Promise<void> {
  if (!isId("wh", id)) throw notFound(id);
  const rows = await db
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .returning({ id: webhooks.id });
  if (rows.length === 0) throw notFound(id);
}

/** Filters of the delivery log (docs/webhooks.md, "Delivery log"); instants as RFC 3339 text, already validated. */
export interface DeliveryFilter {
  limit: number;
  cursor?: string;
  status?: DeliveryStatus;
  event_type?: WebhookEventType;
  since?: string;
  until?: string;
  after_sequence?: number;
}

/** Deliveries with attempt logs, newest first or by `after_sequence` (docs/webhooks.md, "Sequence numbers"). */
export async function listDeliveries(db: DbOrTx, accountId: string, id: string, page: DeliveryFilter) {
  await requireWebhook(db, accountId, id);
  const conds: (SQL | undefined)[] = [eq(deliveries.webhookId, id)];
  const bySequence = page.after_sequence !== undefined;
  if (page.after_sequence !== undefined) conds.push(gt(deliveries.sequence, page.after_sequence));
  else if (page.cursor) conds.push(lt(deliveries.id, page.cursor));
  if (page.status === "failed")
    conds.push(
      or(
        inArray(deliveries.state, ["abandoned", "dropped"]),
        and(eq(deliveries.state, "pending"), gt(deliveries.attempts, 0)),
      ),
    );
  else if (page.status) conds.push(eq(deliveries.state, page.status));
  if (page.event_type) conds.push(eq(deliveries.eventType, page.event_type));
  // The route's schema has checked both are date-times.
  const since = page.since === undefined ? undefined : dateTimeMs(page.since);
  const until = page.until === undefined ? undefined : dateTimeMs(page.until);
  if (since !== undefined) conds.push(gte(deliveries.enqueuedAt, new Date(since)));
  if (until !== undefined) conds.push(lt(deliveries.enqueuedAt, new Date(until)));
  const order = bySequence ? [asc(deliveries.sequence), asc(deliveries.id)] : [desc(deliveries.id)];
  const rows = await db
    .select()
    .from(deliveries)
    .where(and(...conds))
    .orderBy(...order)
    .limit(page.limit + 1);
  const more = rows.length > page.limit;
  const pageRows = rows.slice(0, page.limit);
  const ids = pageRows.map((r) => r.id);
  const atts = ids.length
    ? await db
        .select()
        .from(deliveryAttempts)
        .where(inArray(deliveryAttempts.deliveryId, ids))
        .orderBy(desc(deliveryAttempts.attempt), desc(deliveryAttempts.id))
    : [];
  const byDelivery = new Map<string, typeof atts>();
  for (const a of atts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
  const list = pageRows.map((d) => ({
    id: d.id,
    event: d.eventType,
    event_id: d.eventId,
    event_type: d.eventType as WebhookEventType,
    sequence: d.sequence,
    mode: d.mode as "test" | "live",
    state: d.state,
    attempts: d.attempts,
    enqueued_at: isoSecond(d.enqueuedAt),
    next_attempt_at: d.state === "pending" && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    attempt_log: (byDelivery.get(d.id) ?? []).map((a) => ({
      attempt: a.attempt,
      url: a.url,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error: a.error,
      response_snippet: a.responseSnippet,
    })),
  }));
  return {
    deliveries: list,
    count: list.length,
    next_cursor: more && !bySequence ? (pageRows.at(-1)?.id ?? null) : null,
  };
}
