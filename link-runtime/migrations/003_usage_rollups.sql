-- Conversations older than any rolling window are only ever counted, never listed, so they can
-- be folded into one count per recipient and per campaign (CONVERSATION_ROLLUP_AFTER_DAYS) and
-- deleted: the record stops growing with every conversation ever started. A counter is rebuilt
-- from the rows left plus these counts, read in one statement, so a roll-up committing in between
-- is seen either wholly or not at all.
CREATE TABLE recipient_rollups (
  recipient_id text PRIMARY KEY,
  conversations bigint NOT NULL CHECK (conversations >= 0)
);

CREATE TABLE campaign_rollups (
  campaign_id text PRIMARY KEY,
  conversations bigint NOT NULL CHECK (conversations >= 0)
);

-- Finds the rows old enough to fold without reading the whole record. BRIN: rows arrive in
-- start order, and a summary per block range costs the hot insert next to nothing, where a
-- B-tree would add an entry to every start.
CREATE INDEX conversations_started_brin ON conversations USING brin (started_at);
