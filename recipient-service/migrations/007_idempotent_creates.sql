-- Creates made under an Idempotency-Key, each recorded in the transaction of its create with the
-- answer it gave. The gateway keeps answers too, but a create that outlives the gateway's
-- deadline commits after the gateway has answered 503 and let the client retry: the retry finds
-- this row (or waits on it while that create is still running) and gets the first answer instead
-- of creating the batch again. Kept as long as the gateway replays keys (a day), then pruned like
-- applied_usage, found by the BRIN index since rows arrive in time order.
CREATE TABLE idempotent_creates (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  outcome text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idempotent_creates_applied_at ON idempotent_creates USING brin (applied_at);
