-- Conversations per campaign, so that reading a campaign's allowance costs one row instead of a
-- count over its whole ledger (which grows by every conversation, for as long as the campaign
-- runs). Triggers on the ledger keep the totals, in the transaction of every statement that
-- changes it: a usage consumer of the previous version, still running during an upgrade, keeps
-- them true as well.
CREATE TABLE campaign_usage (
  campaign_id text PRIMARY KEY,
  used bigint NOT NULL
);

-- Statement-level: one upsert per campaign per batch, not one per conversation. Only rows
-- actually inserted are in `inserted` (a repeated conversation id, skipped by ON CONFLICT, is not).
CREATE FUNCTION campaign_usage_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO campaign_usage AS u (campaign_id, used)
  SELECT campaign_id, count(*) FROM inserted GROUP BY campaign_id ORDER BY campaign_id
  ON CONFLICT (campaign_id) DO UPDATE SET used = u.used + EXCLUDED.used;
  RETURN NULL;
END $$;

CREATE FUNCTION campaign_usage_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE campaign_usage AS u SET used = u.used - d.n
    FROM (SELECT campaign_id, count(*) AS n FROM deleted GROUP BY campaign_id) AS d
   WHERE u.campaign_id = d.campaign_id;
  RETURN NULL;
END $$;

-- Creating a trigger locks the ledger against writes until this migration commits, so the
-- totals counted below and the writes the triggers see afterwards neither miss nor overlap.
CREATE TRIGGER conversations_usage_added AFTER INSERT ON conversations
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION campaign_usage_add();
CREATE TRIGGER conversations_usage_removed AFTER DELETE ON conversations
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION campaign_usage_remove();

INSERT INTO campaign_usage (campaign_id, used)
SELECT campaign_id, count(*) FROM conversations GROUP BY campaign_id;
