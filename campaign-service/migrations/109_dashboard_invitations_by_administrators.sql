-- An Outreach administrator invites too (create-operator.js --invite): such an invitation has no
-- inviting operator, and ends only when used, withdrawn, replaced or expired.
ALTER TABLE operator_invitations ALTER COLUMN invited_by DROP NOT NULL;
