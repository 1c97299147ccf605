-- The recipient service looks for deleted campaigns that still have recipients every minute, and
-- whenever a tombstone arrives; deleted campaigns are few among the replicas.
CREATE INDEX campaign_replicas_deleted ON campaign_replicas (id) WHERE deleted_at IS NOT NULL;
