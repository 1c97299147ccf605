-- Recipients of one instant (two batches created in the same millisecond share their instants)
-- are listed by id compared byte by byte, whatever the database's locale: the list query orders
-- by `id COLLATE "C"`, and this index gives it that order so the query still reads it in order.
CREATE INDEX recipients_list_order_bytewise ON recipients (campaign_id, created_at, id COLLATE "C");
DROP INDEX recipients_list_order;
