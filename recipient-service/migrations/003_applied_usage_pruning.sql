-- applied_usage only has to recognise a usage event delivered again, which can happen only while
-- the events stream still holds it (7 days) or a link runtime republishes a batch it never saw
-- confirmed: rows older than USAGE_DEDUP_RETENTION_DAYS are pruned (usage-consumer.ts). Rows
-- arrive in time order, so a BRIN index finds the old ones at almost no cost per insert.
CREATE INDEX applied_usage_applied_at ON applied_usage USING brin (applied_at);
