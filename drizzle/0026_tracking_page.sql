CREATE TABLE "account_branding" (
	"account_id" text PRIMARY KEY NOT NULL,
	"public_links_enabled" boolean DEFAULT true NOT NULL,
	"display_name" text,
	"logo_type" text,
	"logo_data" text,
	"accent_color" text,
	"support_url" text,
	"support_email" text,
	"show_reference" boolean DEFAULT false NOT NULL,
	"frame_ancestors" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "public_page_views" (
	"account_id" text NOT NULL,
	"day" date NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "public_page_views_account_id_day_pk" PRIMARY KEY("account_id","day")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "public_link_key_enc" text;--> statement-breakpoint
ALTER TABLE "follows" ADD COLUMN "public_link_nonce" text;--> statement-breakpoint
ALTER TABLE "follows" ADD COLUMN "public_token_hash" text;--> statement-breakpoint
ALTER TABLE "account_branding" ADD CONSTRAINT "account_branding_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "public_page_views" ADD CONSTRAINT "public_page_views_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "follows_public_token_hash_key" ON "follows" USING btree ("public_token_hash");