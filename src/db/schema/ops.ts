/** Deployment-wide settings, one row per name: `secrets_key_check` makes a process with another SECRETS_KEY refuse to start. */
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const serviceSettings = pgTable("service_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
