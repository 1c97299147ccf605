-- A deleted draft campaign stays as a row with deleted_at set rather than going away: its snapshot
-- (deletedAt set) must outlive it in every republish of the state stream, so that a replica rebuilt
-- from scratch still learns it is gone and never takes recipients for it again. Every read but that
-- republish leaves such rows out.
ALTER TABLE campaigns ADD COLUMN deleted_at timestamptz;
