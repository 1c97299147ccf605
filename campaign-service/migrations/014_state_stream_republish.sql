-- The JetStream state stream under which every snapshot was last enqueued, by its name and
-- creation instant. A stream JetStream lost and created again has another creation instant, and
-- holds none of the snapshots other services rebuild their state from: seeing one makes this
-- service enqueue every snapshot again (events/state-republisher.ts).
CREATE TABLE state_streams (
  name text PRIMARY KEY,
  created text NOT NULL,
  republished_at timestamptz NOT NULL
);
