-- A project's activity: who created, changed, launched, halted, topped off or deleted what, written
-- in the transaction of the change itself, so that no change goes unrecorded and none is recorded
-- that did not happen. The actor is the operator's e-mail as it was then, or "admin API".
CREATE TABLE project_activity (
  seq bigserial PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id),
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target_id text NOT NULL,
  target_name text NOT NULL,
  detail text NOT NULL DEFAULT ''
);
CREATE INDEX project_activity_project ON project_activity (project_id, seq DESC);
