CREATE TABLE "courier_call_buckets" (
	"courier" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	"kinds" integer[] NOT NULL,
	"latency" integer[] NOT NULL,
	"latency_sum_ms" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "courier_call_buckets_pkey" PRIMARY KEY("courier","minute")
);
--> statement-breakpoint
CREATE TABLE "courier_health" (
	"courier" text PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"memory" jsonb NOT NULL,
	"figures" jsonb NOT NULL,
	"evaluated_at" timestamp with time zone NOT NULL,
	"incident_id" text
);
--> statement-breakpoint
CREATE TABLE "courier_incidents" (
	"id" text PRIMARY KEY NOT NULL,
	"courier" text NOT NULL,
	"state" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"transitions" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "courier_call_buckets_minute_idx" ON "courier_call_buckets" USING btree ("minute");--> statement-breakpoint
CREATE INDEX "courier_incidents_started_idx" ON "courier_incidents" USING btree ("started_at");