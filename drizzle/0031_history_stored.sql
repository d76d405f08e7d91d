-- A shipment's history as stored, newest first, still in the compact encoding (modules/following/history.ts,
-- decodeHistory): what the delivery claim reads, decoded by the worker instead of by `shipment_checkpoint` per
-- checkpoint in the statement (docs/performance.md, "History read encoded"). Inlined into the calling statement
-- (no subquery in it), so a history without chunks costs its column; the chunks are read by a function of their own.
CREATE FUNCTION "shipment_history_chunks"(ids bigint[]) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(jsonb_agg(c.e ORDER BY k.n DESC, c.pos), '[]'::jsonb) FROM unnest(ids) WITH ORDINALITY k(id, n)
    JOIN shipment_checkpoint_chunks ch ON ch.id = k.id
    CROSS JOIN LATERAL jsonb_array_elements(ch.checkpoints) WITH ORDINALITY c(e, pos)
$$;--> statement-breakpoint
CREATE FUNCTION "shipment_history_stored"(s "shipments") RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN s.history_at IS DISTINCT FROM s.updated_at THEN s.checkpoints
    WHEN s.history_chunks IS NULL THEN coalesce(s.history_tail, '[]'::jsonb)
    ELSE coalesce(s.history_tail, '[]'::jsonb) || shipment_history_chunks(s.history_chunks) END
$$;
