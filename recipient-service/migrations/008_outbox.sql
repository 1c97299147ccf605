-- RecipientChanged events, each written in the transaction of the change it announces and
-- published by a relay afterwards (see the platform's outbox): a change committed while NATS is
-- down reaches the link runtimes once NATS is back, and the write no longer waits on NATS (an
-- unreachable NATS held it past the gateway's deadline, which answered 503 for a saved change).
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  subject text NOT NULL,
  payload jsonb NOT NULL,
  trace_context jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  refused text
);
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
