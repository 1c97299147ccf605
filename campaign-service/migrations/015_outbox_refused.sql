-- Why NATS refused an outbox row for good (it is over the server's max_payload). Such a row is set
-- aside, marked sent with its reason, so that it no longer holds back every change behind it.
ALTER TABLE outbox ADD COLUMN refused text;
