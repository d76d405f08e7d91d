/** OpenAPI additions: `Idempotency-Key` on every `POST /v1/…` (docs/idempotency.md) and the shipments/events examples. */
import { createHash } from "node:crypto";
import { ERROR_MESSAGES, VALIDATION_EXAMPLE, WH_ID } from "./examples.ts";
import { IDEMPOTENCY_KEY_PATTERN, KEY_REUSED_TYPE, MAX_IDEMPOTENCY_KEY_LENGTH } from "../http/idempotency.ts";
import { codesIn, errorSchema } from "./errors.ts";
import { TRACK_EXAMPLE } from "../modules/tracking/model.ts";
import { sampleData } from "../modules/webhooks/delivery/payload.ts";
import type { Json } from "./json.ts";

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const errorExample = (code: keyof typeof ERROR_MESSAGES) => ({
  summary: code,
  value: { success: false, error: { code, message: ERROR_MESSAGES[code] } },
});

const IDEMPOTENCY_PARAMETER: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: `Makes a retry safe: the answer of the first request under this key that ran is stored for 24 hours and replayed (with \`Idempotent-Replayed: true\`) to a retry with the same key and the same request; a refusal (401, 402, 408, 422, 429) or a 5xx is not stored, so a retry runs afresh. A different request under the key → 422 with \`type: "idempotency_key_reused"\` at \`loc: ["header", "Idempotency-Key"]\`; a retry while the first runs → 409 IDEMPOTENCY_IN_PROGRESS. 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters; a UUID is a good key.`,
  schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: IDEMPOTENCY_KEY_PATTERN },
};

export const REPLAYED_HEADER_DOC: Json = {
  description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
  schema: { type: "string", enum: ["true"] },
};

const KEY_REUSED_EXAMPLE = {
  detail: [
    {
      loc: ["header", "Idempotency-Key"],
      msg: "This key was already used with a different request (method, path or body); use a new key.",
      type: KEY_REUSED_TYPE,
    },
  ],
};

/**
 * The operation's own example key: a UUID (version 4 layout) from the SHA-256 of its operationId. A key shared by
 * every example would make the second operation tried in Swagger UI or Postman a 422 `idempotency_key_reused`.
 */
function exampleIdempotencyKey(operationId: string): string {
  const h = createHash("sha256").update(operationId).digest("hex");
  const variant = "89ab"[Number.parseInt(h.slice(16, 17), 16) & 3];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Adds the Idempotency-Key parameter, the replay header and the 409/422 codes to one finished POST operation. */
export function addIdempotency(op: Json): void {
  op.parameters = [
    ...(op.parameters ?? []),
    { ...IDEMPOTENCY_PARAMETER, example: exampleIdempotencyKey(String(op.operationId)) },
  ];
  for (const [status, r] of Object.entries(op.responses as Json))
    if (status.startsWith("2"))
      r.headers = { ...r.headers, "Idempotent-Replayed": ref("headers", "Idempotent-Replayed") };
  const r409 = op.responses["409"];
  if (r409) {
    const json = r409.content["application/json"];
    r409.description = `${r409.description.replace(/\.$/, "")}, or a request with this Idempotency-Key is still running.`;
    json.schema = errorSchema([...codesIn(json.schema), "IDEMPOTENCY_IN_PROGRESS"]);
    json.examples.IDEMPOTENCY_IN_PROGRESS = errorExample("IDEMPOTENCY_IN_PROGRESS");
    r409.headers["Retry-After"] = ref("headers", "Retry-After");
  } else
    op.responses["409"] = {
      description: "A request with this Idempotency-Key is still running.",
      headers: { "X-Request-Id": ref("headers", "X-Request-Id"), "Retry-After": ref("headers", "Retry-After") },
      content: {
        "application/json": {
          schema: errorSchema(["IDEMPOTENCY_IN_PROGRESS"]),
          examples: { IDEMPOTENCY_IN_PROGRESS: errorExample("IDEMPOTENCY_IN_PROGRESS") },
        },
      },
    };
  const r422 = op.responses["422"];
  r422.description = `Validation error (every problem listed at once), or the Idempotency-Key was used with a different request (\`type: "${KEY_REUSED_TYPE}"\`).`;
  r422.content["application/json"] = {
    schema: ref("schemas", "ValidationError"),
    examples: {
      validation: { summary: "Validation error", value: VALIDATION_EXAMPLE },
      [KEY_REUSED_TYPE]: { summary: "Idempotency-Key reused", value: KEY_REUSED_EXAMPLE },
    },
  };
  op.responses = Object.fromEntries(Object.entries(op.responses as Json).sort(([a], [b]) => a.localeCompare(b)));
}

const FOLLOW_DATA = { reference: "ORD-10042", metadata: { channel: "web", warehouse: "BLR-2" } };
const PUBLIC_URL = "https://track.example.com/t/3q2-7wEjW1cX9r8kYbVfZPqL0m4nD5sT6uA7vB8wC9x";
const samplePayload = {
  event: "tracking.delivered",
  enqueued_at: "2026-11-05T13:30:00Z",
  data: {
    ...sampleData("tracking.delivered", "2026-11-05T13:30:00Z"),
    public_url: PUBLIC_URL,
    courier: "delhivery",
    tracking_number: "1234567890121",
    ...FOLLOW_DATA,
  },
};
const DLV_ID = "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a";
const EVT_ID = "evt_01937c2a9e4b7d1f8c6a5b4e3d2c1b0b";
const SUMMARY = {
  courier: "delhivery",
  tracking_number: "1234567890121",
  status: "in_transit",
  most_recent_status: "In transit",
  last_checkpoint_at: "2026-11-04T15:32:00.000Z",
  estimated_delivery_date: "06-Nov-2026",
  followed_since: "2026-11-03T08:00:00.000Z",
  next_check_at: "2026-11-05T16:00:00.000Z",
  reason_code: "customer_unavailable",
  stalled: true,
  predicted_delivery: {
    date: "2026-11-06",
    earliest: "2026-11-05",
    latest: "2026-11-08",
    basis: "lane",
    sample_size: 412,
  },
  ...FOLLOW_DATA,
  public_url: PUBLIC_URL,
};

const BRANDING = {
  public_links_enabled: true,
  display_name: "Chai & Co",
  has_logo: true,
  accent_color: "#7a1f5c",
  support_url: "https://help.chai.example/orders",
  support_email: "care@chai.example",
  show_reference: false,
  frame_ancestors: ["https://shop.chai.example"],
  updated_at: "2026-11-05T10:00:00.000Z",
};

/** An NDR action as answered (docs/ndr-actions.md): consignee masked. */
const ACTION_EXAMPLE = {
  id: "act_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c",
  action: "update_consignee",
  status: "requested",
  courier_reference: null,
  requested_at: "2026-11-05T14:30:00.000Z",
  updated_at: "2026-11-05T14:30:00.000Z",
  consignee: { phone: "98******10", address: "Fl**************************ar" },
};

/** Per operationId: parameter, body and success examples (merged into OPERATION_EXAMPLES). */
export const FEATURE_EXAMPLES: Record<
  string,
  { params?: Record<string, string | number | boolean>; body?: unknown; ok?: unknown }
> = {
  followShipments: {
    body: {
      shipments: [
        { courier: "delhivery", tracking_number: "1234567890121", ...FOLLOW_DATA },
        { courier: "auto", tracking_number: "1Z999AA10123456784" },
      ],
    },
    ok: {
      success: true,
      data: {
        shipments: [
          {
            courier: "delhivery",
            tracking_number: "1234567890121",
            result: "accepted",
            already_followed: false,
            public_url: PUBLIC_URL,
          },
          {
            courier: "ups",
            tracking_number: "1Z999AA10123456784",
            result: "accepted",
            already_followed: false,
            public_url: "https://track.example.com/t/Zx8vN2mQ4rT6yU1wE3oP5aS7dF9gH0jK2lL4zX6cV8b",
          },
        ],
        accepted: 2,
        counted: 2,
      },
    },
  },
  listShipments: {
    params: {
      state: "in_transit",
      courier: "delhivery",
      updated_since: "2026-11-01T00:00:00Z",
      reference: "ORD-10042",
      reason_code: "customer_unavailable",
      stalled: "true",
      limit: 20,
      cursor: "MTc5NTQwMDUwMDAwMDAwMC5zaHBfMDE5MzdjMmE5ZTRiN2QxZjhjNmE1YjRlM2QyYzFiMGE",
    },
    ok: { success: true, data: { shipments: [SUMMARY], count: 1, next_cursor: null } },
  },
  getShipment: {
    params: { courier: "delhivery", tracking_number: "1234567890121" },
    ok: {
      success: true,
      data: { ...TRACK_EXAMPLE.data, FetchTime: "0.000", ExecutionTime: "0.004" },
      follow: { ...FOLLOW_DATA, public_url: PUBLIC_URL },
      actions: [],
    },
  },
  rotatePublicLink: {
    params: { courier: "delhivery", tracking_number: "1234567890121" },
    ok: {
      success: true,
      data: {
        courier: "delhivery",
        tracking_number: "1234567890121",
        public_url: "https://track.example.com/t/Qm9vN3pL5tR7wY2uE4iO6aS8dF0gH1jK3lZ5xC7vB9n",
      },
    },
  },
  getBranding: { ok: { success: true, data: BRANDING } },
  updateBranding: {
    body: { display_name: "Chai & Co", accent_color: "#7a1f5c", support_url: "https://help.chai.example/orders" },
    ok: { success: true, data: BRANDING },
  },
  updateShipment: {
    params: { courier: "delhivery", tracking_number: "1234567890121" },
    body: { reference: "ORD-10042-R", metadata: { warehouse: null, priority: "high" } },
    ok: {
      success: true,
      data: {
        courier: "delhivery",
        tracking_number: "1234567890121",
        reference: "ORD-10042-R",
        metadata: { channel: "web", priority: "high" },
      },
    },
  },
  unfollowShipment: { params: { courier: "delhivery", tracking_number: "1234567890121" } },
  createShipmentAction: {
    params: { courier: "delhivery", tracking_number: "1234567890203" },
    body: { action: "update_consignee", consignee: { phone: "9876543210", address: "Flat 4, 2nd Cross, Indiranagar" } },
    ok: { success: true, data: ACTION_EXAMPLE },
  },
  listShipmentActions: {
    params: { courier: "delhivery", tracking_number: "1234567890203" },
    ok: {
      success: true,
      data: {
        actions: [{ ...ACTION_EXAMPLE, status: "accepted", courier_reference: "UPL10575891229462827496" }],
        count: 1,
      },
    },
  },
  listEvents: {
    params: {
      type: "tracking.delivered",
      courier: "delhivery",
      tracking_number: "1234567890121",
      since: "2026-11-01T00:00:00Z",
      limit: 20,
      cursor: EVT_ID,
    },
    ok: {
      success: true,
      data: {
        events: [
          {
            id: EVT_ID,
            type: "tracking.delivered",
            created_at: "2026-11-05T13:30:00Z",
            courier: "delhivery",
            tracking_number: "1234567890121",
            payload: samplePayload,
          },
        ],
        count: 1,
        next_cursor: null,
      },
    },
  },
  redeliverWebhookDelivery: {
    params: { webhook_id: WH_ID, delivery_id: DLV_ID },
    ok: {
      success: true,
      data: { delivery_id: "dlv_01937c2b0c1d7e2f8a9b0c1d2e3f4a5b", enqueued_at: "2026-11-05T10:01:00.000Z" },
    },
  },
  recoverWebhookDeliveries: {
    params: { webhook_id: WH_ID },
    body: { since: "2026-11-04T00:00:00Z" },
    ok: { success: true, data: { queued: 3 } },
  },
};
