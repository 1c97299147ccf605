-- An operator's display time zone is NULL until they choose one, so that choosing UTC is told
-- apart from never having chosen (the dashboard then offers the browser's zone). Rows still at
-- the old default cannot be told apart, so they count as not chosen, as they were shown before.
ALTER TABLE operators ALTER COLUMN time_zone DROP NOT NULL, ALTER COLUMN time_zone DROP DEFAULT;
UPDATE operators SET time_zone = NULL WHERE time_zone = 'UTC';
