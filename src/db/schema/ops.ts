/**
 * Service-wide settings the processes of one deployment must agree on, one
 * row per name. Today: `secrets_key_check`, the HMAC of a constant under the
 * deployment's SECRETS_KEY (src/secrets/key.ts), so a process started
 * with another key refuses to start instead of failing to decrypt later.
 */
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const serviceSettings = pgTable("service_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
