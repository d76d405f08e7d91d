CREATE TABLE "delivery_queue" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"due_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "delivery_queue" ADD CONSTRAINT "delivery_queue_delivery_id_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivery_queue_due_idx" ON "delivery_queue" USING btree ("due_at");--> statement-breakpoint
INSERT INTO "delivery_queue" ("delivery_id", "due_at") SELECT "id", "next_attempt_at" FROM "deliveries" WHERE "state" = 'pending' AND "next_attempt_at" IS NOT NULL;--> statement-breakpoint
CREATE FUNCTION "delivery_queue_enqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO delivery_queue (delivery_id, due_at)
  SELECT id, next_attempt_at FROM inserted WHERE state = 'pending' AND next_attempt_at IS NOT NULL;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "deliveries_enqueue" AFTER INSERT ON "deliveries" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "delivery_queue_enqueue"();--> statement-breakpoint
DROP INDEX IF EXISTS "deliveries_due_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "deliveries_finished_idx";--> statement-breakpoint
CREATE INDEX "deliveries_created_idx" ON "deliveries" USING btree ("created_at");--> statement-breakpoint
ALTER TABLE "deliveries" SET (fillfactor = 50);--> statement-breakpoint
ALTER TABLE "shipments" SET (fillfactor = 90);--> statement-breakpoint
CREATE INDEX "shipments_due_bucket_idx" ON "shipments" USING btree (date_bin('15 minutes', "next_check_at", timestamptz '2000-01-01 00:00:00+00')) WHERE next_check_at is not null;
--> statement-breakpoint
ALTER TABLE "delivery_attempts" DROP CONSTRAINT IF EXISTS "delivery_attempts_webhook_id_webhooks_id_fk";
