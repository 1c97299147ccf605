-- Usage is announced once per durable write (a batch of conversations) instead of once per
-- conversation. Each batch waits here, written in the same statement as its conversations,
-- until JetStream confirms its event; the row is then deleted.
CREATE TABLE usage_batches (
  id text PRIMARY KEY,
  -- The event exactly as published (UsageAdmittedBatch JSON), so a republish is identical.
  event text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX usage_batches_created ON usage_batches (created_at);

-- conversations.published_at and its partial index stay while the previous version may still
-- run (expand, then contract): this version sets published_at as it writes a row, since the
-- row's batch announces it, so the previous version's sweep never picks it up; and it announces
-- the rows the previous version left unpublished. A later release drops both.
