-- Usage batches applied to recipients, one row per batch of conversations a link runtime wrote
-- (UsageStarts events), instead of one row per conversation in applied_usage: a batch is applied
-- once whichever event brings it. Pruned like applied_usage (usage-consumer.ts), found by the
-- BRIN index since rows arrive in time order.
CREATE TABLE applied_usage_batches (
  batch_id text PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX applied_usage_batches_applied_at ON applied_usage_batches USING brin (applied_at);
