-- A deleted device stays as a row with deleted_at set: deleted campaigns (tombstones, 016) still
-- refer to it. Only a device no other campaign uses can be deleted; every read leaves it out.
ALTER TABLE devices ADD COLUMN deleted_at timestamptz;
