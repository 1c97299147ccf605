-- A campaign deleted in the campaign service (only a draft can be) arrives as a snapshot with
-- deletedAt set. The replica keeps it, so that a create naming that campaign is refused as not
-- found rather than fetching the campaign again, and a late older snapshot cannot revive it.
ALTER TABLE campaign_replicas ADD COLUMN deleted_at timestamptz;
