-- Pincode lanes for predictions and estimates (docs/predictions.md, "Pincode lanes"): the origin and destination
-- PIN of a shipment, from the courier's answer or given on follow. Additive, for a rolling deploy: both columns are
-- nullable and the previous release neither reads nor writes them.
ALTER TABLE "shipments" ADD COLUMN "origin_pincode" text;--> statement-breakpoint
ALTER TABLE "shipments" ADD COLUMN "destination_pincode" text;
