-- The JetStream state stream this service published its snapshots to, by name and creation
-- instant. A stream JetStream lost and created again has another creation instant and holds none
-- of the snapshots other services rebuild their state from: seeing one makes this service publish
-- every snapshot again (events/state-republisher.ts).
CREATE TABLE stream_epochs (
  name text PRIMARY KEY,
  created text NOT NULL,
  recorded_at timestamptz NOT NULL
);
