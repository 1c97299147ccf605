-- Known devices: a browser an operator signed in from gets a long-lived cookie with a random token,
-- stored here only hashed (SHA-256) with the operator it is bound to. A sign-in for that operator
-- presenting the token is exempt from the pause of its address by all clients together, so that
-- outsiders guessing from many machines cannot lock the owner out. A password change deletes them.
CREATE TABLE operator_devices (
  token_hash text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz NOT NULL
);
CREATE INDEX operator_devices_operator ON operator_devices (operator_id, last_used_at);
-- Failed sign-ins made presenting a known device's token are counted by that device too
-- ('' for none): its own count, which the failures of clients without it never fill.
ALTER TABLE operator_sign_in_failures ADD COLUMN device text NOT NULL DEFAULT '';
CREATE INDEX operator_sign_in_failures_device ON operator_sign_in_failures (device, at) WHERE device <> '';
