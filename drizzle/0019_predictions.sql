CREATE TABLE "transit_stats" (
	"courier" text NOT NULL,
	"basis" text NOT NULL,
	"origin" text NOT NULL,
	"destination" text NOT NULL,
	"transit_p05" double precision NOT NULL,
	"transit_p10" double precision NOT NULL,
	"transit_p25" double precision NOT NULL,
	"transit_p50" double precision NOT NULL,
	"transit_p75" double precision NOT NULL,
	"transit_p90" double precision NOT NULL,
	"transit_p95" double precision NOT NULL,
	"transit_count" integer NOT NULL,
	"gap_p50" double precision,
	"gap_p90" double precision,
	"gap_p95" double precision,
	"gap_count" integer NOT NULL,
	"rebuilt_at" timestamp with time zone NOT NULL,
	CONSTRAINT "transit_stats_courier_basis_origin_destination_pk" PRIMARY KEY("courier","basis","origin","destination")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "eta_previous" date;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "eta_new" date;--> statement-breakpoint
ALTER TABLE "shipments" ADD COLUMN "stalled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "shipments" ADD COLUMN "predicted_delivery" jsonb;