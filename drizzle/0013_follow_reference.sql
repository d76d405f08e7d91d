ALTER TABLE "follows" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "follows" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "follows_account_reference_idx" ON "follows" USING btree ("account_id","reference") WHERE reference is not null;