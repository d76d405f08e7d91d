CREATE TABLE "alert_address_links" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "alert_windows" (
	"account_id" text NOT NULL,
	"kind" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"sent" integer NOT NULL,
	CONSTRAINT "alert_windows_pkey" PRIMARY KEY("account_id","kind")
);
--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "digest_id" bigint;--> statement-breakpoint
ALTER TABLE "alert_address_links" ADD CONSTRAINT "alert_address_links_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_windows" ADD CONSTRAINT "alert_windows_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alert_address_links_token_hash_key" ON "alert_address_links" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "alert_address_links_account_idx" ON "alert_address_links" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "alerts_due_any_idx" ON "alerts" USING btree ("next_attempt_at") WHERE state in ('pending', 'queued');--> statement-breakpoint
CREATE INDEX "alerts_digest_idx" ON "alerts" USING btree ("digest_id") WHERE digest_id is not null;