-- Conversations per campaign per quarter hour (UTC), so that the dashboard's usage chart and the
-- monthly statements read a few rows per campaign-day instead of the whole ledger, which grows
-- by every conversation for as long as the campaign runs. A quarter hour lies wholly inside one
-- hour and one day of every time zone in use (their offsets are whole quarter hours), so the
-- chart groups these rows by local hour or day exactly; months are UTC, so statements do too.
CREATE TABLE campaign_usage_quarters (
  campaign_id text NOT NULL,
  quarter timestamptz NOT NULL,
  conversations bigint NOT NULL,
  PRIMARY KEY (campaign_id, quarter)
);

-- Writes to the ledger wait until this migration commits, so the quarters counted below and the
-- writes the triggers see afterwards neither miss nor overlap (the replaced functions take effect
-- for statements that start after the commit).
LOCK TABLE conversations IN SHARE ROW EXCLUSIVE MODE;

-- The triggers of 011 keep both tables, one statement each per batch: the quarters of a batch
-- are grouped, so a batch costs one upsert per campaign and quarter, not one per conversation.
CREATE OR REPLACE FUNCTION campaign_usage_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO campaign_usage AS u (campaign_id, used)
  SELECT campaign_id, count(*) FROM inserted GROUP BY campaign_id ORDER BY campaign_id
  ON CONFLICT (campaign_id) DO UPDATE SET used = u.used + EXCLUDED.used;
  INSERT INTO campaign_usage_quarters AS q (campaign_id, quarter, conversations)
  SELECT campaign_id, date_bin('15 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS quarter, count(*)
    FROM inserted GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (campaign_id, quarter) DO UPDATE SET conversations = q.conversations + EXCLUDED.conversations;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION campaign_usage_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE campaign_usage AS u SET used = u.used - d.n
    FROM (SELECT campaign_id, count(*) AS n FROM deleted GROUP BY campaign_id) AS d
   WHERE u.campaign_id = d.campaign_id;
  UPDATE campaign_usage_quarters AS q SET conversations = q.conversations - d.n
    FROM (SELECT campaign_id, date_bin('15 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS quarter, count(*) AS n
            FROM deleted GROUP BY 1, 2) AS d
   WHERE q.campaign_id = d.campaign_id AND q.quarter = d.quarter;
  RETURN NULL;
END $$;

INSERT INTO campaign_usage_quarters (campaign_id, quarter, conversations)
SELECT campaign_id, date_bin('15 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), count(*)
  FROM conversations GROUP BY 1, 2;
