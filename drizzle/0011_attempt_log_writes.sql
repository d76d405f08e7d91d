-- The attempt log's rows follow their outbox row without a foreign key (src/db/schema/webhooks.ts,
-- deliveryAttempts): one set-based delete per statement that deletes outbox rows (pruning, or the cascade
-- from a deleted webhook, account, event or shipment) instead of a key check per inserted attempt.
CREATE FUNCTION "delivery_attempts_drop"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM delivery_attempts a USING removed r WHERE a.delivery_id = r.id;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "deliveries_drop_attempts" AFTER DELETE ON "deliveries" REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "delivery_attempts_drop"();--> statement-breakpoint
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_delivery_id_deliveries_id_fk";--> statement-breakpoint
-- Read by delivery id only (the dashboard and the trigger above); nothing reads by webhook and start time.
DROP INDEX "delivery_attempts_webhook_idx";--> statement-breakpoint
-- Retention deletes by start time; rows arrive in start-time order, which a BRIN index summarises for
-- almost nothing per insert.
DROP INDEX "delivery_attempts_started_idx";--> statement-breakpoint
CREATE INDEX "delivery_attempts_started_idx" ON "delivery_attempts" USING brin ("started_at");
