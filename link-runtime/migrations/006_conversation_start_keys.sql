-- The client's key of the start that made a conversation (Idempotency-Key), NULL without one.
-- Redis remembers a key for the minutes a customer retries in; when Redis loses its data, the
-- rebuild of a recipient's counters restores its recent keys from here, so a retry after the
-- loss answers the conversation already made instead of starting, and charging, another.
-- Nullable and without a default, so adding it rewrites nothing; the previous version's rows
-- and inserts leave it NULL (their starts are not restored, as before).
ALTER TABLE conversations ADD COLUMN start_key text;
