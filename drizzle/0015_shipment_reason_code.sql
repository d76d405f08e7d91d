ALTER TABLE "shipments" ADD COLUMN "reason_code" text;--> statement-breakpoint
CREATE INDEX "shipments_reason_code_idx" ON "shipments" USING btree ("reason_code") WHERE reason_code is not null;