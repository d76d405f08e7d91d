CREATE TABLE "usage_daily" (
	"account_id" text NOT NULL,
	"day" date NOT NULL,
	"used" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_daily_account_id_day_pk" PRIMARY KEY("account_id","day")
);
--> statement-breakpoint
ALTER TABLE "usage_daily" ADD CONSTRAINT "usage_daily_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Months counted before this table: their use so far counts on the month's first day, so each month's days sum to it.
INSERT INTO "usage_daily" ("account_id", "day", "used") SELECT "account_id", ("period" || '-01')::date, "used" FROM "usage_counters" WHERE "used" <> 0;
