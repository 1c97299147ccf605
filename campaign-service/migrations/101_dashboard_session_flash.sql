-- A one-time message for the session's next page (e.g. a new API key, shown once after a
-- redirect so that reloading the page never creates a second key). Cleared when read.
ALTER TABLE operator_sessions ADD COLUMN flash jsonb;
