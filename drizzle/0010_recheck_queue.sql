CREATE TABLE "recheck_queue" (
	"shipment_id" text PRIMARY KEY NOT NULL,
	"courier" text NOT NULL,
	"tracking_number" text NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"lease_owner" text,
	"failures" integer DEFAULT 0 NOT NULL
) WITH (fillfactor = 70);
--> statement-breakpoint
INSERT INTO "recheck_queue" ("shipment_id", "courier", "tracking_number", "due_at", "lease_until", "lease_owner", "failures") SELECT "id", "courier", "tracking_number", "next_check_at", "lease_until", "lease_owner", "recheck_failures" FROM "shipments" WHERE "next_check_at" IS NOT NULL ORDER BY "next_check_at";--> statement-breakpoint
ALTER TABLE "recheck_queue" ADD CONSTRAINT "recheck_queue_shipment_id_shipments_id_fk" FOREIGN KEY ("shipment_id") REFERENCES "public"."shipments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "recheck_queue_due_idx" ON "recheck_queue" USING btree ("due_at");--> statement-breakpoint
CREATE INDEX "recheck_queue_due_bucket_idx" ON "recheck_queue" USING btree (date_bin('15 minutes', "due_at", timestamptz '2000-01-01 00:00:00+00'));--> statement-breakpoint
CREATE INDEX "recheck_queue_due_bucket_offset_idx" ON "recheck_queue" USING btree (date_bin('15 minutes', "due_at", timestamptz '2000-01-01 00:07:30+00'));
