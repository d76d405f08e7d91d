CREATE TABLE "recheck_schedule" (
	"shipment_id" text PRIMARY KEY NOT NULL,
	"courier" text NOT NULL,
	"tracking_number" text NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"checked_at" timestamp with time zone,
	"lease_until" timestamp with time zone,
	"lease_owner" text,
	"failures" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "recheck_schedule_due_bucket_idx" ON "recheck_schedule" USING btree (date_bin('15 minutes', "due_at", timestamptz '2000-01-01 00:00:00+00'));--> statement-breakpoint
CREATE INDEX "recheck_schedule_due_bucket_offset_idx" ON "recheck_schedule" USING btree (date_bin('15 minutes', "due_at", timestamptz '2000-01-01 00:07:30+00'));--> statement-breakpoint
-- Queue tables: room for the lease's HOT update, and vacuum after 1 % of churn, not 20 % (docs/rechecks.md, "Vacuum").
ALTER TABLE "recheck_schedule" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);--> statement-breakpoint
ALTER TABLE "recheck_queue" SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.02);--> statement-breakpoint
ALTER TABLE "delivery_queue" SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.02);--> statement-breakpoint
ALTER TABLE "alerts" SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 500);
