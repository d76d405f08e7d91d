-- Courier rate budgets shared by every process (src/db/schema/couriers.ts; src/modules/couriers/budget.ts):
-- one small row per courier backend and credential, updated in place (HOT) by one statement per grant.
CREATE TABLE "courier_budgets" (
	"key" text PRIMARY KEY NOT NULL,
	"per_second" double precision NOT NULL,
	"per_day" integer NOT NULL,
	"tokens" double precision NOT NULL,
	"pace_tokens" double precision NOT NULL,
	"refilled_ms" bigint NOT NULL,
	"day" text NOT NULL,
	"day_used" integer DEFAULT 0 NOT NULL,
	"followed" integer,
	"coverage_at" timestamp with time zone
) WITH (fillfactor = 50);
