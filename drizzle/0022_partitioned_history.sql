-- Partitioned history (docs/capacity.md, "Partitioned history"): events, deliveries and delivery_attempts become
-- tables partitioned by week of created_at (started_at for attempts), so that retention drops whole weeks.
-- Each old table is renamed to <name>_legacy; a parent is created LIKE it (so columns added by earlier
-- migrations carry over), with its indexes and foreign keys; a legacy table with rows is attached as the
-- partition (MINVALUE, next week boundary), after a CHECK NOT VALID + VALIDATE and a unique (id, key) index,
-- so that attaching scans nothing more and builds no index; an empty one is dropped.
-- Keys of a partitioned table must include its partition key: foreign keys INTO these tables go
-- (deliveries.event_id, delivery_queue.delivery_id); the deliveries_drop_attempts trigger removes queue rows.
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_event_id_events_id_fk";--> statement-breakpoint
ALTER TABLE "delivery_queue" DROP CONSTRAINT "delivery_queue_delivery_id_deliveries_id_fk";--> statement-breakpoint
DROP TRIGGER "deliveries_enqueue" ON "deliveries";--> statement-breakpoint
DROP TRIGGER "deliveries_drop_attempts" ON "deliveries";--> statement-breakpoint
CREATE FUNCTION "history_partition_create"(parent text, lo timestamptz, hi timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  part text := parent || '_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMMDD');
BEGIN
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)%s', part, parent, lo, hi,
    CASE WHEN parent = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
END
$$;--> statement-breakpoint
CREATE FUNCTION "history_partition_migrate"(t text, k text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  legacy text := t || '_legacy';
  defs text[];
  fks text[];
  d text;
  r record;
  cut timestamptz;
  first_week timestamptz := date_trunc('week', now(), 'UTC');
BEGIN
  -- An operator may build the legacy key beforehand, online: CREATE UNIQUE INDEX CONCURRENTLY <t>_legacy_key ON <t> (id, <k>).
  SELECT array_agg(pg_get_indexdef(indexrelid)) INTO defs FROM pg_index
    WHERE indrelid = t::regclass AND NOT indisprimary AND indexrelid::regclass::text <> t || '_legacy_key';
  SELECT array_agg(format('ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))) INTO fks
    FROM pg_constraint WHERE conrelid = t::regclass AND contype = 'f';
  FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = t::regclass AND c.relname <> t || '_legacy_key' LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, 55) || '_legacy');
  END LOOP;
  EXECUTE format('ALTER TABLE %I RENAME TO %I', t, legacy);
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING ALL EXCLUDING INDEXES) PARTITION BY RANGE (%I)', t, legacy, k);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id, %I)', t, t || '_pkey', k);
  FOREACH d IN ARRAY coalesce(defs, '{}') LOOP EXECUTE d; END LOOP;
  FOREACH d IN ARRAY coalesce(fks, '{}') LOOP EXECUTE format('ALTER TABLE %I %s', t, d); END LOOP;
  EXECUTE format('SELECT max(%I) FROM %I', k, legacy) INTO cut;
  IF cut IS NULL THEN
    EXECUTE format('DROP TABLE %I', legacy);
  ELSE
    -- Rows written until the next week boundary still land in the legacy partition; retention drops it whole
    -- once that boundary is past retention (src/db/partitions.ts).
    first_week := date_trunc('week', greatest(cut, now()), 'UTC') + interval '7 days';
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %L) NOT VALID', legacy, legacy || '_range', k, first_week);
    EXECUTE format('ALTER TABLE %I VALIDATE CONSTRAINT %I', legacy, legacy || '_range');
    EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON %I (id, %I)', legacy || '_key', legacy, k);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', legacy, t || '_pkey_legacy');
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY USING INDEX %I', legacy, legacy || '_key', legacy || '_key');
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', t, legacy, first_week);
  END IF;
  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT%s', t || '_default', t, CASE WHEN t = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
  FOR i IN 0..3 LOOP
    PERFORM history_partition_create(t, first_week + i * interval '7 days', first_week + (i + 1) * interval '7 days');
  END LOOP;
END
$$;--> statement-breakpoint
SELECT history_partition_migrate('events', 'created_at');--> statement-breakpoint
SELECT history_partition_migrate('deliveries', 'created_at');--> statement-breakpoint
SELECT history_partition_migrate('delivery_attempts', 'started_at');--> statement-breakpoint
DROP FUNCTION "history_partition_migrate"(text, text);--> statement-breakpoint
CREATE OR REPLACE FUNCTION "delivery_attempts_drop"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM delivery_attempts a USING removed r WHERE a.delivery_id = r.id;
  DELETE FROM delivery_queue q USING removed r WHERE q.delivery_id = r.id;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "deliveries_enqueue" AFTER INSERT ON "deliveries" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "delivery_queue_enqueue"();--> statement-breakpoint
CREATE TRIGGER "deliveries_drop_attempts" AFTER DELETE ON "deliveries" REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "delivery_attempts_drop"();
