/** Schemas of the NDR actions API (docs/ndr-actions.md); bodies registered once in {@link actionModels}. */
import { Type as T, type Static } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { ACTION_NAMES, ACTION_STATUSES, type ActionName } from "../../domain/actions.ts";
import { literalUnion } from "../../lib/literal-union.ts";

/** The followed shipment, as in the shipments routes (the shipments module reads this one, not the other way round). */
export const ActionParams = t.Object({
  courier: Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "Courier slug." }),
  tracking_number: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "The tracking number (normalised like /v1/track).",
  }),
});

const NO_CONTROL = "^[^\\u0000-\\u001F\\u007F]*$";

const ActionCreateBody = t.Object(
  {
    action: t.Union(ACTION_NAMES.map((a) => t.Literal(a)) as [ReturnType<typeof t.Literal<ActionName>>], {
      description:
        "`reattempt`: deliver again; `defer_delivery`: deliver on `deferred_date`; `update_consignee`: correct the consignee's details (the courier then re-attempts); `return_to_origin`: send it back to you.",
    }),
    deferred_date: t.Optional(
      Text({
        pattern: "^\\d{4}-\\d{2}-\\d{2}$",
        description:
          "`defer_delivery` only: the day to deliver, `YYYY-MM-DD` in the courier's calendar; after today and within the courier's window (Delhivery: at most 6 days after the first failed attempt).",
        examples: ["2026-11-30"],
      }),
    ),
    consignee: t.Optional(
      t.Object(
        {
          name: t.Optional(Text({ minLength: 1, maxLength: 100, pattern: NO_CONTROL })),
          phone: t.Optional(
            Text({ pattern: "^\\+?[0-9][0-9 -]{5,19}$", description: "Digits, optionally +, spaces, hyphens." }),
          ),
          address: t.Optional(Text({ minLength: 1, maxLength: 300, pattern: NO_CONTROL })),
          pincode: t.Optional(Text({ pattern: "^[1-9][0-9]{5}$", description: "An Indian 6-digit pincode." })),
          landmark: t.Optional(Text({ minLength: 1, maxLength: 200, pattern: NO_CONTROL })),
        },
        {
          additionalProperties: false,
          description:
            "`update_consignee` only: the fields to change; which ones a courier can change is in GET /v1/couriers. Personal data: stored encrypted, shown back masked only.",
        },
      ),
    ),
    note: t.Optional(
      Text({
        minLength: 1,
        maxLength: 500,
        pattern: NO_CONTROL,
        description: "Your own note; stored encrypted, never sent to the courier nor shown back.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ActionCreateInput = typeof ActionCreateBody.static;

const nullable = <S extends Parameters<typeof T.Union>[0][number]>(s: S) => T.Union([s, T.Null()]);

/** One action as the API, webhooks and the dashboard show it (consignee values masked). */
export const ShipmentActionSchema = T.Object(
  {
    id: T.String({ examples: ["act_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c"] }),
    action: literalUnion(ACTION_NAMES),
    status: literalUnion(ACTION_STATUSES, {
      description:
        "`requested`: sent or being sent, the courier has not decided; `accepted` / `rejected`: the courier's decision (`reason` holds its words); `failed`: it could not be delivered to the courier (`reason` says why).",
    }),
    courier_reference: nullable(
      T.String({ description: "The courier's id for the request (Delhivery: the UPL id), once it gave one." }),
    ),
    requested_at: T.String({ format: "date-time" }),
    updated_at: T.String({ format: "date-time" }),
    reason: T.Optional(T.String()),
    deferred_date: T.Optional(T.String({ examples: ["2026-11-30"] })),
    consignee: T.Optional(T.Record(T.String(), T.String(), { description: "The fields sent, masked (`98******10`)." })),
  },
  { title: "ShipmentAction" },
);
export type ShipmentAction = Static<typeof ShipmentActionSchema>;

/** `actions` of the stored read (GET /v1/shipments/{courier}/{tracking_number}). */
export const ShipmentActionsField = T.Array(ShipmentActionSchema, {
  description:
    "This account's NDR actions on the shipment, newest first (docs/ndr-actions.md; GET …/actions lists the same).",
});

export const ActionResponse = T.Object(
  { success: T.Literal(true), data: ShipmentActionSchema },
  { title: "ShipmentActionResponse" },
);
export const ActionListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({ actions: T.Array(ShipmentActionSchema), count: T.Integer() }),
  },
  { title: "ShipmentActionList" },
);

export const actionModels = schemaModels("actions.models", {
  ShipmentActionCreate: ActionCreateBody,
  ShipmentActionResponse: ActionResponse,
  ShipmentActionList: ActionListResponse,
});

/** A `shipment_actions` row as `to_jsonb` gives it (webhook claim, events list) or the service reads it. */
export interface ActionRowJson {
  id: string;
  action: string;
  status: string;
  courier_reference: string | null;
  reason: string | null;
  deferred_date: string | null;
  details_masked: { consignee?: Record<string, string> } | null;
  requested_at: string | Date;
  updated_at: string | Date;
}

const iso = (v: string | Date) => new Date(v).toISOString();

/** The API shape of a stored action. */
export function actionView(r: ActionRowJson): ShipmentAction {
  return {
    id: r.id,
    action: r.action as ShipmentAction["action"],
    status: r.status as ShipmentAction["status"],
    courier_reference: r.courier_reference,
    requested_at: iso(r.requested_at),
    updated_at: iso(r.updated_at),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.deferred_date ? { deferred_date: String(r.deferred_date).slice(0, 10) } : {}),
    ...(r.details_masked?.consignee ? { consignee: r.details_masked.consignee } : {}),
  };
}

/** The action of the sample `tracking.action_updated` payload (test fires, the document's `webhooks`). */
export const SAMPLE_ACTION = actionView({
  id: "act_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c",
  action: "reattempt",
  status: "accepted",
  courier_reference: "UPL10575891229462827496",
  reason: null,
  deferred_date: null,
  details_masked: null,
  requested_at: "2026-11-05T14:30:00Z",
  updated_at: "2026-11-05T14:31:00Z",
});
