-- Projects, API keys, devices, campaigns and their budgets. Campaign state is never
-- stored: it is derived from launched_at, halted_at, start_date, end_date and the clock.
CREATE TABLE projects (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id),
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  rate_limit_per_minute integer NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz,
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX api_keys_project ON api_keys (project_id, created_at, id);

CREATE TABLE devices (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id),
  name text NOT NULL,
  is_active boolean NOT NULL,
  ip_allow_list text[] NOT NULL,
  languages text[] NOT NULL,
  default_language text NOT NULL,
  styling jsonb NOT NULL,
  voice jsonb NOT NULL,
  persona text NOT NULL,
  custom_instructions text NOT NULL,
  knowledge jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX devices_project ON devices (project_id, created_at, id);

CREATE TABLE campaigns (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id),
  name text NOT NULL,
  device_id text NOT NULL REFERENCES devices (id),
  start_date timestamptz NOT NULL,
  end_date timestamptz NOT NULL,
  budget_mode text NOT NULL CHECK (budget_mode IN ('metered', 'fixed')),
  price_per_conversation bigint CHECK (price_per_conversation >= 0),
  fixed_price bigint CHECK (fixed_price >= 0),
  recipient_cap integer CHECK (recipient_cap >= 0),
  launched_at timestamptz,
  halted_at timestamptz,
  created_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1,
  CHECK (start_date < end_date)
);
CREATE INDEX campaigns_project ON campaigns (project_id, created_at, id);
CREATE INDEX campaigns_launched ON campaigns (launched_at) WHERE launched_at IS NOT NULL;

-- Each top-off adds conversations and keeps the price in force when it was made.
CREATE TABLE top_offs (
  id text PRIMARY KEY,
  -- Orders top-offs made within the same millisecond: billing draws from the oldest first.
  seq bigserial NOT NULL,
  campaign_id text NOT NULL REFERENCES campaigns (id),
  conversations integer NOT NULL CHECK (conversations > 0),
  price_per_conversation bigint CHECK (price_per_conversation >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX top_offs_campaign ON top_offs (campaign_id, created_at, seq);

-- One row per admitted conversation: the id makes redelivered events count once.
-- No foreign key: usage is a fact reported by the link runtime and must never be refused.
CREATE TABLE conversations (
  conversation_id text PRIMARY KEY,
  campaign_id text NOT NULL,
  project_id text NOT NULL,
  recipient_id text NOT NULL,
  started_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_campaign ON conversations (campaign_id, started_at, conversation_id);

-- Transactional outbox: a change and its snapshot commit together; a relay publishes in id order.
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  subject text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;

-- Lifecycle notices: the unique key is the claim that makes each transition publish once.
CREATE TABLE lifecycle_notices (
  campaign_id text NOT NULL,
  transition text NOT NULL CHECK (transition IN ('started', 'ended')),
  project_id text NOT NULL,
  at timestamptz NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  PRIMARY KEY (campaign_id, transition)
);
CREATE INDEX lifecycle_notices_unsent ON lifecycle_notices (claimed_at) WHERE sent_at IS NULL;
