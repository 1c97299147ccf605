-- Every conversation updates its recipient's interaction_count and last_interaction_at, columns
-- no index holds: such an update can stay on the row's page (a HOT update, no index entry)
-- only if the page has room. Bulk inserts fill pages to the brim, so without this every
-- recipient's first usage would move the row and add an entry to each of the table's four
-- indexes. Pages filled from now on keep a tenth free; existing pages keep their layout until
-- the table is rewritten (VACUUM FULL or pg_repack), which is not needed for correctness.
ALTER TABLE recipients SET (fillfactor = 90);
