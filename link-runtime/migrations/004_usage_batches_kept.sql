-- A batch stays USAGE_REPLAY_HOURS after JetStream confirmed its event, instead of being deleted
-- then: a NATS that loses its JetStream files loses the events its consumers had not applied yet,
-- and this service, seeing the events stream created anew (stream_epochs), publishes the batches
-- it kept once more (the consumers apply each batch once, whichever event brings it).
-- While a replica of the previous version runs alongside (a rolling update, or a rollback), it
-- takes every row for unconfirmed: its sweep republishes kept rows, 200 every USAGE_REPUBLISH_MS
-- (applied once all the same), and deletes them, and its unconfirmed-usage gauge counts them.
-- usage_batches_created stays for its sweep until a later release drops it.
ALTER TABLE usage_batches ADD COLUMN confirmed_at timestamptz;
CREATE INDEX usage_batches_unconfirmed ON usage_batches (created_at) WHERE confirmed_at IS NULL;
-- Rows are confirmed about in the order they are written: a summary per block range finds the
-- ones old enough to prune, at next to no cost to the confirmations.
CREATE INDEX usage_batches_confirmed ON usage_batches USING brin (confirmed_at);

-- The events stream this service published usage to, by name and creation instant, and while a
-- replay for a stream created anew is under way, the instant before which confirmed batches are
-- to be published again (so that a replay interrupted by a crash goes on).
CREATE TABLE stream_epochs (
  name text PRIMARY KEY,
  created text NOT NULL,
  recorded_at timestamptz NOT NULL,
  replay_before timestamptz
);
