/** Webhook delivery and background-work variables of config-env.ts's schema. */
import { Type as T } from "@sinclair/typebox";
import { RECEIVER_TIMEOUT_MS, RETRY_SCHEDULE_SECONDS } from "../domain/delivery.ts";
import { File, Int } from "./env-kinds.ts";

const SPEC_WEBHOOK_TIMEOUT_MS = RECEIVER_TIMEOUT_MS;

export const WEBHOOK_ENV = {
  WEBHOOK_RETRY_SCHEDULE: T.Array(T.Integer(), {
    default: RETRY_SCHEDULE_SECONDS,
    "x-pattern": "^[0-9]+(,[0-9]+){4}$",
    "x-expected": "five whole numbers of seconds separated by commas",
    description: "Seconds before delivery retries 1 to 5.",
  }),
  WEBHOOK_TIMEOUT_MS: Int({
    default: SPEC_WEBHOOK_TIMEOUT_MS,
    description: "Timeout of one webhook delivery attempt (per redirect hop), ms.",
  }),
  WEBHOOK_ALLOW_PRIVATE_CIDRS: T.Array(
    T.String({ pattern: "^[0-9a-fA-F:.]+/\\d{1,3}$", "x-expected": "a CIDR range (address/prefix length)" }),
    {
      default: [],
      description:
        "Comma-separated private ranges webhooks may reach (tests and private networks; logged as a warning). Set it the same on every process: API processes check addresses when webhooks are created.",
    },
  ),
  WEBHOOK_CA_FILE: File("Extra PEM CA trusted for webhook receivers."),
  WEBHOOK_POLL_SECONDS: Int({
    default: 1,
    minimum: 1,
    description:
      "Seconds between the delivery worker's backstop polls for retries coming due and missed notifications (a NOTIFY wakes it at once).",
  }),
  RECHECK_POLL_SECONDS: Int({
    default: 5,
    minimum: 1,
    description: "Seconds between drains of the shipments due for a re-check.",
  }),
  LEASE_SLACK_SECONDS: Int({
    default: 30,
    description:
      "How long a delivery or re-check claim outlives the longest its work may take; a killed process's claims are taken over after it.",
  }),
  TEST_WEBHOOKS_ENABLED: T.Boolean({
    default: true,
    description: "Kill-switch for test fires (`false` answers 503 `TEST_WEBHOOKS_DISABLED`).",
  }),
  RETENTION_DAYS: Int({
    default: 30,
    description: "Age after which delivered outbox rows, attempt logs and old events are pruned.",
  }),
};
