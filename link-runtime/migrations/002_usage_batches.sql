-- Usage is announced once per durable write (a batch of conversations) instead of once per
-- conversation. Each batch waits here, written in the same statement as its conversations,
-- until JetStream confirms its event; the row is then deleted. The conversations themselves
-- are no longer updated after their insert.
CREATE TABLE usage_batches (
  id text PRIMARY KEY,
  -- The event exactly as published (UsageAdmittedBatch JSON), so a republish is identical.
  event text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_batches_created ON usage_batches (created_at);

-- Conversations recorded before batching whose event was never confirmed: one batch each,
-- under the conversation's own id (consumers apply each conversation once either way).
INSERT INTO usage_batches (id, event, created_at)
SELECT id,
       json_build_object(
         'batchId', id,
         'conversations', json_build_array(json_build_object(
           'conversationId', id,
           'recipientId', recipient_id,
           'campaignId', campaign_id,
           'projectId', project_id,
           'startedAt', started_at))
       )::text,
       started_at
  FROM conversations
 WHERE published_at IS NULL;

DROP INDEX conversations_unpublished;
ALTER TABLE conversations DROP COLUMN published_at;
