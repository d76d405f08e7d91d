CREATE TABLE "shipment_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"shipment_id" text NOT NULL,
	"action" text NOT NULL,
	"status" text DEFAULT 'requested' NOT NULL,
	"stage" text,
	"courier_reference" text,
	"reason" text,
	"deferred_date" date,
	"details_enc" text,
	"details_masked" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"due_at" timestamp with time zone,
	"lease_until" timestamp with time zone,
	"lease_owner" text,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "action_id" text;--> statement-breakpoint
ALTER TABLE "shipment_actions" ADD CONSTRAINT "shipment_actions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shipment_actions" ADD CONSTRAINT "shipment_actions_shipment_id_shipments_id_fk" FOREIGN KEY ("shipment_id") REFERENCES "public"."shipments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "shipment_actions_due_idx" ON "shipment_actions" USING btree ("due_at") WHERE due_at is not null;--> statement-breakpoint
CREATE INDEX "shipment_actions_shipment_idx" ON "shipment_actions" USING btree ("shipment_id","account_id","requested_at");--> statement-breakpoint
CREATE INDEX "shipment_actions_account_idx" ON "shipment_actions" USING btree ("account_id");