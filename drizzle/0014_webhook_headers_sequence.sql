-- Custom headers per webhook (encrypted, plus their masked form) and per-webhook event sequence numbers
-- (src/db/schema/webhooks.ts; docs/webhooks.md, "Custom headers", "Sequence numbers").
CREATE TABLE "webhook_sequences" (
	"webhook_id" text PRIMARY KEY NOT NULL,
	"last_sequence" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "sequence" bigint;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "headers_enc" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "headers_masked" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_sequences" ADD CONSTRAINT "webhook_sequences_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;