/**
 * NDR actions (docs/ndr-actions.md): what an account asked a courier to do about a failed delivery, and the
 * outbox row that sends it (`due_at`, lease) and polls an asynchronous courier's answer. Consignee details and the
 * note are personal data: `details_enc` (SECRETS_KEY, the account id bound), `details_masked` for display only.
 */
import { sql } from "drizzle-orm";
import { date, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { shipments } from "./shipments.ts";

export const shipmentActions = pgTable(
  "shipment_actions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    shipmentId: text("shipment_id")
      .notNull()
      .references(() => shipments.id, { onDelete: "cascade" }),
    /** `reattempt` | `defer_delivery` | `update_consignee` | `return_to_origin` (src/domain/actions.ts). */
    action: text("action").notNull(),
    /** `requested` | `accepted` | `rejected` | `failed`. */
    status: text("status").notNull().default("requested"),
    /** `sending` (not yet at the courier) | `polling` (courier reference held, answer pending) | null (final). */
    stage: text("stage"),
    courierReference: text("courier_reference"),
    reason: text("reason"),
    deferredDate: date("deferred_date", { mode: "string" }),
    /** `{consignee?, note?}` as JSON, encrypted; null once the action is final and past retention. */
    detailsEnc: text("details_enc"),
    /** The same with every value masked (`98******10`): what the API, events and the dashboard show. */
    detailsMasked: jsonb("details_masked").$type<Record<string, unknown>>(),
    attempts: integer("attempts").notNull().default(0),
    dueAt: timestamp("due_at", { withTimezone: true }),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    leaseOwner: text("lease_owner"),
    requestedAt: timestamp("requested_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("shipment_actions_due_idx").on(t.dueAt).where(sql`due_at is not null`),
    index("shipment_actions_shipment_idx").on(t.shipmentId, t.accountId, t.requestedAt),
    index("shipment_actions_account_idx").on(t.accountId),
  ],
);
