-- Invitations to manage a project, for an address with no account yet: whoever opens the link the
-- inviting operator passes on chooses the account's password, which no one else then knows. Only
-- the link token's SHA-256 is stored. A row goes once used or withdrawn, with its inviter's
-- account or membership, or with its project; expired rows are pruned.
CREATE TABLE operator_invitations (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  invited_by text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
-- One invitation per address and project: inviting again replaces its link.
CREATE UNIQUE INDEX operator_invitations_address ON operator_invitations (project_id, lower(email));
CREATE INDEX operator_invitations_inviter ON operator_invitations (invited_by);
CREATE INDEX operator_invitations_expiry ON operator_invitations (expires_at);
