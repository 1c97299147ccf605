-- When a replay (for an events stream created anew) made a batch unconfirmed again: the instant
-- the replay was marked due, NULL for a batch never replayed. The outbox gauges tell a new event
-- JetStream has not confirmed (NATS down, a failing publish: worth an alert after two minutes)
-- from a kept one waiting to go out again, up to USAGE_REPLAY_HOURS old (expected for as long
-- as a replay drains). Nullable and without a default, so adding it rewrites nothing; a
-- previous version's replay leaves it NULL, and its batches count as new while they drain.
ALTER TABLE usage_batches ADD COLUMN replayed_at timestamptz;
