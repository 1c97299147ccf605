-- Failed sign-ins per e-mail address, to slow down password guessing.
CREATE TABLE operator_sign_in_failures (
  email text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX operator_sign_in_failures_email ON operator_sign_in_failures (lower(email), at);
