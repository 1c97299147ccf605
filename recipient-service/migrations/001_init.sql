-- The campaign facts this service needs, replicated from the campaign state stream.
-- recipient_count is maintained in the same transactions as recipient inserts and
-- deletes: it is the list's total and the figure the recipient cap is checked against.
CREATE TABLE campaign_replicas (
  id text PRIMARY KEY,
  project_id text NOT NULL,
  device_id text NOT NULL,
  start_date timestamptz NOT NULL,
  end_date timestamptz NOT NULL,
  launched_at timestamptz,
  halted_at timestamptz,
  recipient_cap integer,
  -- Snapshot version; -1 marks a row fetched over gRPC before its first snapshot arrived.
  version bigint NOT NULL,
  recipient_count integer NOT NULL DEFAULT 0 CHECK (recipient_count >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaign_replicas_project ON campaign_replicas (project_id, id);

CREATE TABLE recipients (
  id text PRIMARY KEY,
  project_id text NOT NULL,
  campaign_id text NOT NULL REFERENCES campaign_replicas (id),
  token text NOT NULL UNIQUE,
  external_id text,
  label text,
  metadata jsonb NOT NULL DEFAULT '{}',
  is_active boolean NOT NULL DEFAULT true,
  injection_mode text NOT NULL DEFAULT 'append' CHECK (injection_mode IN ('append', 'replace')),
  injection_instructions text,
  max_total_interactions integer,
  max_interactions_per_window integer,
  window_seconds integer,
  interaction_count integer NOT NULL DEFAULT 0,
  last_interaction_at timestamptz,
  disabled_message text,
  cooldown_message text,
  distillation_status text NOT NULL DEFAULT 'none',
  distillation_lens_id text,
  distillation_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- externalId is unique per campaign; recipients without one are never deduplicated.
CREATE UNIQUE INDEX recipients_campaign_external_id ON recipients (campaign_id, external_id)
  WHERE external_id IS NOT NULL;
-- The list order: createdAt, then id. It also serves every lookup by campaign; lookups by
-- project always name the campaign or the id too, so no project index is kept (every
-- extra index slows the batch inserts).
CREATE INDEX recipients_list_order ON recipients (campaign_id, created_at, id);

-- Conversations whose usage was applied: makes the usage consumer exactly-once.
CREATE TABLE applied_usage (
  conversation_id text PRIMARY KEY,
  recipient_id text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
