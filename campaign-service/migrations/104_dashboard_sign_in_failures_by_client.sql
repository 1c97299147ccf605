-- Failed sign-ins also by the client that made them: a pause then holds one client's guesses at an
-- address, not the address's owner out (rows from before count as from no known client).
ALTER TABLE operator_sign_in_failures ADD COLUMN client text NOT NULL DEFAULT '';
CREATE INDEX operator_sign_in_failures_client ON operator_sign_in_failures (client, at);
