-- The foreign key from recipients to campaign_replicas checked the campaign once per inserted
-- row, about a third of a 200-item batch's database time. It guarded nothing the write path
-- does not already guarantee: every batch updates the campaign's replica row (its recipient
-- count) in the same transaction and rolls back when that row is missing, the row lock keeps
-- it in place until commit, and replicas are never deleted.
ALTER TABLE recipients DROP CONSTRAINT recipients_campaign_id_fkey;
