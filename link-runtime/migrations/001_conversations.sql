-- One row per admitted conversation: the durable record every usage counter is rebuilt from.
CREATE TABLE conversations (
  id text PRIMARY KEY,
  recipient_id text NOT NULL,
  campaign_id text NOT NULL,
  project_id text NOT NULL,
  started_at timestamptz NOT NULL,
  -- Set once UsageAdmitted was acknowledged by JetStream; a sweeper republishes the rest.
  published_at timestamptz
);

CREATE INDEX conversations_recipient_started ON conversations (recipient_id, started_at);
CREATE INDEX conversations_campaign ON conversations (campaign_id);
CREATE INDEX conversations_unpublished ON conversations (started_at) WHERE published_at IS NULL;
