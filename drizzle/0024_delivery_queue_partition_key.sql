-- The due set carries its outbox row's partition key (docs/webhooks.md, "The worker"; docs/capacity.md,
-- "Partitioned history"): the claim and every statement after it find a delivery by (id, created_at), one weekly
-- partition each, instead of probing every partition's key index. Additive, for a rolling deploy: the column is
-- nullable, the previous claim (by id) stays correct, and a row inserted without it (by code or a transaction
-- older than this migration) gets it from its delivery by the BEFORE INSERT trigger.
ALTER TABLE "delivery_queue" ADD COLUMN "created_at" timestamp with time zone;--> statement-breakpoint
UPDATE "delivery_queue" q SET "created_at" = d."created_at" FROM "deliveries" d WHERE d."id" = q."delivery_id";--> statement-breakpoint
CREATE OR REPLACE FUNCTION "delivery_queue_enqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO delivery_queue (delivery_id, due_at, created_at)
  SELECT id, next_attempt_at, created_at FROM inserted WHERE state = 'pending' AND next_attempt_at IS NOT NULL;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE FUNCTION "delivery_queue_fill_created"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT d.created_at INTO NEW.created_at FROM deliveries d WHERE d.id = NEW.delivery_id LIMIT 1;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "delivery_queue_fill_created" BEFORE INSERT ON "delivery_queue" FOR EACH ROW WHEN (NEW.created_at IS NULL) EXECUTE FUNCTION "delivery_queue_fill_created"();
