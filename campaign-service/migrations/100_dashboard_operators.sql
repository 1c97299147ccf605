-- Dashboard operators, their project memberships and their sign-in sessions.
CREATE TABLE operators (
  id text PRIMARY KEY,
  email text NOT NULL,
  password_hash text NOT NULL,
  time_zone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL
);
-- E-mail addresses compare case-insensitively.
CREATE UNIQUE INDEX operators_email ON operators (lower(email));

-- An operator sees and changes only the projects listed here.
CREATE TABLE operator_projects (
  operator_id text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (operator_id, project_id)
);
CREATE INDEX operator_projects_project ON operator_projects (project_id);

-- Only a hash of the session id is stored: a leaked table does not yield usable cookies.
CREATE TABLE operator_sessions (
  id_hash text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
CREATE INDEX operator_sessions_expiry ON operator_sessions (expires_at);
