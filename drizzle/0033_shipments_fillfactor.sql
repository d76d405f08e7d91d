-- Room for a changed shipment's new row version on its own page: the update stays HOT, so neither unique key takes a
-- random leaf per change (docs/capacity.md, "Where a changed re-check's WAL goes"). Existing pages get the room as
-- they are rewritten; new rows at once.
ALTER TABLE "shipments" SET (fillfactor = 80);
