-- Usage batches recorded for campaigns, one row per batch of conversations a link runtime wrote
-- (UsageStarts events): such a batch adds to the campaign totals (011) and quarter-hour counts
-- (012) directly, once whichever event brings it, instead of one ledger row per conversation
-- whose triggers add them. The ledger keeps taking the conversation events of older link
-- runtimes. Rows only have to recognise an event delivered again (the events stream keeps 7
-- days), so they are pruned after USAGE_DEDUP_RETENTION_DAYS (usage.consumer.ts).
CREATE TABLE applied_usage_batches (
  batch_id text PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX applied_usage_batches_applied_at ON applied_usage_batches USING brin (applied_at);
