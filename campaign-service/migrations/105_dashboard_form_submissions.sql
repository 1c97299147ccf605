-- One-time form tokens: a form that must not act twice (a top-off, a new API key) carries a
-- random token; its first submission claims it here and records where it led, and the same form
-- sent again (a double click, a network retry, a form sent from a page brought back) is answered
-- with that result instead of acting twice. Ended sessions take their tokens with them.
CREATE TABLE operator_form_submissions (
  session_hash text NOT NULL REFERENCES operator_sessions (id_hash) ON DELETE CASCADE,
  token text NOT NULL,
  location text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (session_hash, token)
);
