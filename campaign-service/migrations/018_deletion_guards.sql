-- Only a draft is ever deleted. A campaign service of the release before deletion (mid-rollout, or
-- after a rollback) does not know deleted_at and could still launch a deleted draft, which would
-- then run with its conversations left off every statement; this refuses that write instead.
ALTER TABLE campaigns ADD CONSTRAINT campaigns_deleted_never_launched
  CHECK (deleted_at IS NULL OR launched_at IS NULL);
-- The campaigns that keep a device from being deleted, read on every device page and deletion.
CREATE INDEX campaigns_device ON campaigns (device_id) WHERE deleted_at IS NULL;
