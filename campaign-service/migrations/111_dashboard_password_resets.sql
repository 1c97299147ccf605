-- Password reset links, which an administrator makes for an operator who forgot their password:
-- whoever opens one chooses the account's new password. Only the link token's SHA-256 is stored.
-- One per account (a new link replaces it); a row goes once used, when the password changes
-- another way, or with its account; expired rows are pruned.
CREATE TABLE operator_password_resets (
  operator_id text PRIMARY KEY REFERENCES operators (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX operator_password_resets_expiry ON operator_password_resets (expires_at);
