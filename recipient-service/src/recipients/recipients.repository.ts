import type { RecipientMessage } from '@outreach/contracts';
import type { Pool, PoolClient } from 'pg';
import type { NewRecipient } from './items';

type Db = Pool | PoolClient;

/** A stored recipient with its campaign's device. */
export interface RecipientRow {
  id: string;
  project_id: string;
  campaign_id: string;
  token: string;
  external_id: string | null;
  label: string | null;
  metadata: Record<string, string>;
  is_active: boolean;
  injection_mode: 'append' | 'replace';
  injection_instructions: string | null;
  max_total_interactions: number | null;
  max_interactions_per_window: number | null;
  window_seconds: number | null;
  interaction_count: number;
  last_interaction_at: Date | null;
  disabled_message: string | null;
  cooldown_message: string | null;
  distillation_status: string;
  distillation_lens_id: string | null;
  distillation_error: string | null;
  created_at: Date;
  device_id: string;
}

const SELECT = `SELECT r.id, r.project_id, r.campaign_id, r.token, r.external_id, r.label, r.metadata,
       r.is_active, r.injection_mode, r.injection_instructions, r.max_total_interactions,
       r.max_interactions_per_window, r.window_seconds, r.interaction_count, r.last_interaction_at,
       r.disabled_message, r.cooldown_message, r.distillation_status, r.distillation_lens_id,
       r.distillation_error, r.created_at, c.device_id
  FROM recipients.recipients r
  JOIN recipients.campaign_replicas c ON c.id = r.campaign_id AND c.deleted_at IS NULL`;

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** The link of a token: `<base>/i/<token>`. */
export function linkOf(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/i/${token}`;
}

/** Maps a row to the gRPC Recipient message (unset optionals are absent, not null). */
export function toMessage(row: RecipientRow, publicBaseUrl: string): RecipientMessage {
  return {
    id: row.id,
    campaignId: row.campaign_id,
    projectId: row.project_id,
    externalId: opt(row.external_id),
    label: opt(row.label),
    metadata: row.metadata,
    deviceId: row.device_id,
    isActive: row.is_active,
    link: linkOf(publicBaseUrl, row.token),
    injectionMode: row.injection_mode,
    injectionInstructions: opt(row.injection_instructions),
    maxTotalInteractions: opt(row.max_total_interactions),
    maxInteractionsPerWindow: opt(row.max_interactions_per_window),
    windowSeconds: opt(row.window_seconds),
    interactionCount: row.interaction_count,
    lastInteractionAt: row.last_interaction_at ? row.last_interaction_at.toISOString() : undefined,
    disabledMessage: opt(row.disabled_message),
    cooldownMessage: opt(row.cooldown_message),
    distillationStatus: row.distillation_status,
    distillationLensId: opt(row.distillation_lens_id),
    distillationError: opt(row.distillation_error),
    createdAt: row.created_at.toISOString(),
  };
}

/** The ids of recipients of a campaign holding any of `externalIds`, by externalId. */
export async function findByExternalIds(
  db: Db,
  campaignId: string,
  externalIds: string[],
): Promise<Map<string, string>> {
  if (externalIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; external_id: string }>(
    `SELECT id, external_id FROM recipients.recipients WHERE campaign_id = $1 AND external_id = ANY($2::text[])`,
    [campaignId, externalIds],
  );
  return new Map(rows.map((r) => [r.external_id, r.id]));
}

/** One recipient to insert. */
export interface InsertRow extends NewRecipient {
  id: string;
  token: string;
  /** ISO instant with microseconds (the batch position), so list order keeps item order. */
  createdAt: string;
}

// Rows without an externalId are never deduplicated, so they go in plainly: the speculative
// insertion that ON CONFLICT costs on every row is about a sixth of the statement's CPU.
const INSERT_PLAIN = `INSERT INTO recipients.recipients
         (id, project_id, campaign_id, token, external_id, label, metadata, is_active, injection_mode,
          injection_instructions, max_total_interactions, max_interactions_per_window, window_seconds,
          disabled_message, cooldown_message, created_at)
       SELECT u.id, $1, $2, u.token, u.external_id, u.label, u.metadata::jsonb, u.is_active, u.injection_mode,
              u.injection_instructions, u.max_total, u.per_window, u.window_seconds,
              u.disabled_message, u.cooldown_message, u.created_at
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[],
                     $10::text[], $11::int[], $12::int[], $13::int[], $14::text[], $15::text[], $16::timestamptz[])
           AS u(id, token, external_id, label, metadata, is_active, injection_mode, injection_instructions,
                max_total, per_window, window_seconds, disabled_message, cooldown_message, created_at)`;

// Only the (campaign, externalId) index may skip a row: a collision on the id or the token
// (CSPRNG values) is an error to surface, never a row to drop silently.
const INSERT_DEDUPLICATED = `WITH inserted AS (
       ${INSERT_PLAIN}
       ON CONFLICT (campaign_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
       RETURNING external_id
     )
     SELECT count(*)::int AS count, coalesce(array_agg(external_id), '{}') AS external_ids FROM inserted`;

function insertValues(projectId: string, campaignId: string, rows: InsertRow[]): unknown[] {
  const col = <T>(f: (r: InsertRow) => T) => rows.map(f);
  return [
    projectId,
    campaignId,
    col((r) => r.id),
    col((r) => r.token),
    col((r) => r.externalId),
    col((r) => r.label),
    col((r) => JSON.stringify(r.metadata)),
    col((r) => r.isActive),
    col((r) => r.injectionMode),
    col((r) => r.injectionInstructions),
    col((r) => r.maxTotalInteractions),
    col((r) => r.maxInteractionsPerWindow),
    col((r) => r.windowSeconds),
    col((r) => r.disabledMessage),
    col((r) => r.cooldownMessage),
    col((r) => r.createdAt),
  ];
}

/**
 * Inserts a batch with at most two statements, one for the rows without an externalId and
 * one for those with (arrays unnested into rows in their order, so each statement has a
 * fixed number of parameters whatever the batch size, and is prepared once per connection).
 * Rows that collide on (campaign, externalId) are skipped; returned are the number inserted
 * and the externalIds among them (not every id: the caller has them). The campaign's
 * recipient count is the caller's to update, in the same transaction.
 */
export async function insertRecipients(
  db: PoolClient,
  projectId: string,
  campaignId: string,
  rows: InsertRow[],
): Promise<{ count: number; externalIds: Set<string> }> {
  const plain = rows.filter((r) => r.externalId === null);
  const keyed = plain.length === rows.length ? [] : rows.filter((r) => r.externalId !== null);
  let count = 0;
  const externalIds = new Set<string>();
  if (keyed.length > 0) {
    const { rows: result } = await db.query<{ count: number; external_ids: string[] }>({
      name: 'insert-recipients-deduplicated',
      text: INSERT_DEDUPLICATED,
      values: insertValues(projectId, campaignId, keyed),
    });
    count += result[0].count;
    for (const id of result[0].external_ids) externalIds.add(id);
  }
  if (plain.length > 0) {
    const { rowCount } = await db.query({
      name: 'insert-recipients',
      text: INSERT_PLAIN,
      values: insertValues(projectId, campaignId, plain),
    });
    count += rowCount ?? 0;
  }
  return { count, externalIds };
}

/** Adds `delta` to a campaign's recipient count. */
export async function bumpRecipientCount(db: PoolClient, campaignId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await db.query(
    'UPDATE recipients.campaign_replicas SET recipient_count = recipient_count + $2 WHERE id = $1',
    [campaignId, delta],
  );
}

const BY_ID = `${SELECT} WHERE r.id = $1 AND r.project_id = $2`;
const BY_ID_FOR_UPDATE = `${BY_ID} FOR UPDATE OF r`;

/** One recipient of a project; `lock` locks the recipient row. */
export async function findRecipient(
  db: Db,
  projectId: string,
  id: string,
  lock = false,
): Promise<RecipientRow | null> {
  // Named, so each connection parses and plans the hot single read once, not on every call.
  const { rows } = await db.query<RecipientRow>({
    name: lock ? 'recipient-by-id-for-update' : 'recipient-by-id',
    text: lock ? BY_ID_FOR_UPDATE : BY_ID,
    values: [id, projectId],
  });
  return rows[0] ?? null;
}

const BY_IDS = `${SELECT} WHERE r.id = ANY($1::text[])`;

/** The recipients with any of `ids`, in any project (callers check the project). */
export async function findRecipientsByIds(db: Db, ids: string[]): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>({ name: 'recipients-by-ids', text: BY_IDS, values: [ids] });
  return rows;
}

/** A recipient by link token. */
export async function findByToken(db: Db, token: string): Promise<RecipientRow | null> {
  // Named, so each connection plans it once: the first open of every link in a link runtime runs it.
  const { rows } = await db.query<RecipientRow>({
    name: 'recipients-find-by-token',
    text: `${SELECT} WHERE r.token = $1`,
    values: [token],
  });
  return rows[0] ?? null;
}

/** The recipients of `tokens` that exist, in no particular order. */
export async function findByTokens(db: Db, tokens: string[]): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>({
    name: 'recipients-find-by-tokens',
    text: `${SELECT} WHERE r.token = ANY($1::text[])`,
    values: [tokens],
  });
  return rows;
}

/** Filters of a recipient list: the active flag, and text to find in label, externalId or id. */
export interface ListFilter {
  active?: boolean;
  search?: string;
}

/** The WHERE clause of a campaign's recipients under `filter`, its parameters after `$1` (the campaign). */
function listWhere(filter: ListFilter, params: unknown[]): string {
  let where = 'r.campaign_id = $1';
  if (filter.active !== undefined) {
    params.push(filter.active);
    where += ` AND r.is_active = $${params.length}`;
  }
  if (filter.search !== undefined) {
    // The text is matched literally: LIKE's wildcards and escape character are escaped.
    params.push(`%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const p = `$${params.length}`;
    where += ` AND (r.label ILIKE ${p} OR r.external_id ILIKE ${p} OR r.id ILIKE ${p})`;
  }
  return where;
}

/** A page of a campaign's recipients in list order (createdAt, then id byte by byte, as its index holds them). */
export async function listRecipients(
  db: Db,
  campaignId: string,
  page: ListFilter & { limit: number; offset: number },
): Promise<RecipientRow[]> {
  const params: unknown[] = [campaignId];
  const where = listWhere(page, params);
  params.push(page.limit, page.offset);
  const { rows } = await db.query<RecipientRow>(
    `${SELECT} WHERE ${where} ORDER BY r.created_at, r.id COLLATE "C" LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}

/** How many of a campaign's recipients pass `filter` (a scan of the campaign: for searches only). */
export async function countMatching(db: Db, campaignId: string, filter: ListFilter): Promise<number> {
  const params: unknown[] = [campaignId];
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM recipients.recipients r WHERE ${listWhere(filter, params)}`,
    params,
  );
  return rows[0].n;
}

/** Column names of the fields a PATCH may change. */
export const PATCH_COLUMNS = {
  label: 'label',
  isActive: 'is_active',
  injectionMode: 'injection_mode',
  injectionInstructions: 'injection_instructions',
  disabledMessage: 'disabled_message',
  cooldownMessage: 'cooldown_message',
  maxTotalInteractions: 'max_total_interactions',
  maxInteractionsPerWindow: 'max_interactions_per_window',
  windowSeconds: 'window_seconds',
} as const;

export type PatchField = keyof typeof PATCH_COLUMNS;

/** Writes the changed fields of one recipient. */
export async function updateRecipient(
  db: PoolClient,
  id: string,
  changes: Partial<Record<PatchField, unknown>>,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [field, value] of Object.entries(changes)) {
    params.push(value);
    sets.push(`${PATCH_COLUMNS[field as PatchField]} = $${params.length}`);
  }
  if (sets.length === 0) return;
  await db.query(
    `UPDATE recipients.recipients SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
    params,
  );
}

/** A deleted recipient: what the change event needs. */
export interface DeletedRow {
  id: string;
  campaign_id: string;
  project_id: string;
  token: string;
}

/** Deletes recipients of a project within the given campaigns: those of `ids`, or at most `limit`, or all. */
export async function deleteRecipients(
  db: PoolClient,
  projectId: string,
  filter: { ids?: string[]; campaignIds: string[]; limit?: number },
): Promise<DeletedRow[]> {
  if (filter.campaignIds.length === 0) return [];
  const params: unknown[] = [projectId, filter.campaignIds];
  let narrowed = '';
  if (filter.ids) {
    params.push(filter.ids);
    narrowed = ' AND id = ANY($3::text[])';
  } else if (filter.limit !== undefined) {
    params.push(filter.limit);
    narrowed = ` AND id IN (SELECT id FROM recipients.recipients
        WHERE project_id = $1 AND campaign_id = ANY($2::text[]) LIMIT $3)`;
  }
  const { rows } = await db.query<DeletedRow>(
    `DELETE FROM recipients.recipients
      WHERE project_id = $1 AND campaign_id = ANY($2::text[])${narrowed}
      RETURNING id, campaign_id, project_id, token`,
    params,
  );
  return rows;
}

/** The campaigns of a project's recipients among `ids`, with those recipients (deleted campaigns' left out). */
export async function campaignsOfRecipients(
  db: Db,
  projectId: string,
  ids: string[],
): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ id: string; campaign_id: string }>(
    `SELECT r.id, r.campaign_id FROM recipients.recipients r
       JOIN recipients.campaign_replicas c ON c.id = r.campaign_id AND c.deleted_at IS NULL
      WHERE r.project_id = $1 AND r.id = ANY($2::text[])`,
    [projectId, ids],
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.campaign_id, [...(out.get(r.campaign_id) ?? []), r.id]);
  return out;
}

/** Recipient counts of a project's campaigns. */
export async function countByCampaign(
  db: Db,
  projectId: string,
  campaignIds: string[],
): Promise<Map<string, number>> {
  const { rows } = await db.query<{ id: string; recipient_count: number }>(
    `SELECT id, recipient_count FROM recipients.campaign_replicas
      WHERE project_id = $1 AND id = ANY($2::text[])`,
    [projectId, campaignIds],
  );
  return new Map(rows.map((r) => [r.id, r.recipient_count]));
}
