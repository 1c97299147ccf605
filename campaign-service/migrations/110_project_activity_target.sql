-- Entries are looked up by what they name: an account deleted (its address forgotten), an
-- invitation used or ended unused.
CREATE INDEX project_activity_target ON project_activity (target_id);
