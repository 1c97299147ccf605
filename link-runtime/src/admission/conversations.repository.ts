import type { UsageStartsBatch } from '@outreach/contracts';
import { inPages } from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';

/** One admitted conversation, as recorded durably. */
export interface ConversationRecord {
  id: string;
  recipientId: string;
  campaignId: string;
  projectId: string;
  startedAt: Date;
  /** The client's key of the start (Idempotency-Key), when it sent one. */
  startKey?: string;
}

/**
 * What a recipient's counters are rebuilt from: its conversations, its starts in the window, and
 * its recent starts made with a client's key (so that a retry with the key is answered again).
 */
export interface RecipientFacts {
  count: number;
  windowStarts: { id: string; startedAtMs: number }[];
  keyedStarts: { key: string; id: string; startedAtMs: number }[];
}

/** The outbox row of conversations written together, announced in a `UsageStarts` event. */
export interface UsageBatch {
  id: string;
  /** The batch as its usage event carries it (a UsageStartsBatch), JSON. */
  event: string;
  createdAt: Date;
}

/**
 * Inserts many conversations and the batch event that announces them, in one statement (so
 * one transaction). Conversation ids are new for every admission and never written again, so a
 * conflicting id fails the whole batch, whose admissions are then taken back from the counters:
 * skipping it instead would leave a start counted that the durable record does not hold (and
 * cost every insert a speculative insertion). The rows go as six arrays, so every batch size
 * shares one prepared statement.
 */
export async function insertConversations(
  pool: Pool,
  rows: readonly ConversationRecord[],
  batch: UsageBatch,
): Promise<void> {
  await pool.query({
    name: 'link-insert-conversations',
    // published_at only keeps the previous version's sweep off these rows (migration 002).
    text: `WITH conversations AS (
             INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at, start_key, published_at)
             SELECT u.*, $8::timestamptz
               FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $9::text[]) AS u
           )
           INSERT INTO link.usage_batches (id, event, created_at) VALUES ($6, $7, $8)`,
    values: [
      rows.map((r) => r.id),
      rows.map((r) => r.recipientId),
      rows.map((r) => r.campaignId),
      rows.map((r) => r.projectId),
      rows.map((r) => r.startedAt),
      batch.id,
      batch.event,
      batch.createdAt,
      rows.map((r) => r.startKey ?? null),
    ],
  });
}

/**
 * Whether the batch `id` (and so each conversation written with it, in one statement) is recorded,
 * settled for good: unless it is, an empty batch is recorded under its id (already confirmed, so
 * the sweeper leaves it; a replay publishes it again, which consumers apply as nothing). A
 * statement writing the batch that is still running waits for it (or it for that statement) and
 * fails on it: a write whose answer was lost cannot commit after it was found missing, unless the
 * fence itself fails (PostgreSQL unreachable, or its commit stalled as long as the fence waits).
 */
export async function fenceUsageBatch(pool: Pool, id: string, at: Date): Promise<boolean> {
  const empty: UsageStartsBatch = { batchId: id, recipients: [] };
  const { rowCount } = await pool.query(
    `INSERT INTO link.usage_batches (id, event, created_at, confirmed_at) VALUES ($1, $2, $3, $3)
     ON CONFLICT (id) DO NOTHING`,
    [id, JSON.stringify(empty), at],
  );
  return rowCount === 0;
}

/** The conversation a recipient started with the client's key `key` after `since`, or null. */
export async function findKeyedStart(
  pool: Pool,
  recipientId: string,
  key: string,
  since: Date,
): Promise<{ id: string; startedAt: Date } | null> {
  const { rows } = await pool.query<{ id: string; started_at: Date }>({
    name: 'link-find-keyed-start',
    text: `SELECT id, started_at FROM link.conversations
            WHERE recipient_id = $1 AND started_at > $3 AND start_key = $2
            ORDER BY started_at LIMIT 1`,
    values: [recipientId, key, since],
  });
  return rows[0] ? { id: rows[0].id, startedAt: rows[0].started_at } : null;
}

/** A row of `link.conversations`, as CONVERSATION_COLUMNS select it. */
interface ConversationRow {
  id: string;
  recipient_id: string;
  campaign_id: string;
  project_id: string;
  started_at: Date;
}

const CONVERSATION_COLUMNS = 'id, recipient_id, campaign_id, project_id, started_at';

function conversationOf(row: ConversationRow): ConversationRecord {
  return {
    id: row.id,
    recipientId: row.recipient_id,
    campaignId: row.campaign_id,
    projectId: row.project_id,
    startedAt: row.started_at,
  };
}

/** One conversation of the durable record by its id, or null when there is none. */
export async function findConversation(pool: Pool, id: string): Promise<ConversationRecord | null> {
  const { rows } = await pool.query<ConversationRow>({
    name: 'link-find-conversation',
    text: `SELECT ${CONVERSATION_COLUMNS} FROM link.conversations WHERE id = $1`,
    values: [id],
  });
  return rows[0] ? conversationOf(rows[0]) : null;
}

/** The ids of these recipients' conversations in the durable record (not those rolled up). */
export async function conversationIdsOf(pool: Pool, recipientIds: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id FROM link.conversations WHERE recipient_id = ANY($1::text[])',
    [recipientIds],
  );
  return rows.map((r) => r.id);
}

/** Whose facts to read, since when its window's starts (none without), and since when its keyed starts. */
export interface FactsQuery {
  recipientId: string;
  since: Date | null;
  keysSince: Date;
}

/**
 * Recipients' conversations in the durable record (rows and rolled-up count), each one's starts
 * after its `since` and its keyed starts after its `keysSince`, all read in one statement (one
 * snapshot); one answer per query, in order.
 */
export async function loadRecipientsFacts(pool: Pool, queries: FactsQuery[]): Promise<RecipientFacts[]> {
  // Named, so each connection plans it once: every recipient's first start runs it.
  const { rows } = await pool.query<{
    n: string;
    starts: [string, number][];
    keyed: [string, string, number][];
  }>({
    name: 'link-recipients-facts',
    text: `SELECT (SELECT count(*) FROM link.conversations c WHERE c.recipient_id = q.recipient_id)
                  + coalesce((SELECT conversations FROM link.recipient_rollups r
                               WHERE r.recipient_id = q.recipient_id), 0) AS n,
                  coalesce((SELECT json_agg(json_build_array(c.id, floor(extract(epoch FROM c.started_at) * 1000)))
                              FROM link.conversations c
                             WHERE c.recipient_id = q.recipient_id AND c.started_at > q.since), '[]') AS starts,
                  coalesce((SELECT json_agg(json_build_array(c.start_key, c.id, floor(extract(epoch FROM c.started_at) * 1000)))
                              FROM link.conversations c
                             WHERE c.recipient_id = q.recipient_id AND c.started_at > q.keys_since
                               AND c.start_key IS NOT NULL), '[]') AS keyed
             FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS q(recipient_id, since, keys_since, ord)
            ORDER BY q.ord`,
    values: [queries.map((q) => q.recipientId), queries.map((q) => q.since), queries.map((q) => q.keysSince)],
  });
  return rows.map((row) => ({
    count: Number(row.n),
    windowStarts: row.starts.map(([id, startedAtMs]) => ({ id, startedAtMs: Number(startedAtMs) })),
    keyedStarts: row.keyed.map(([key, id, startedAtMs]) => ({ key, id, startedAtMs: Number(startedAtMs) })),
  }));
}

/** A campaign's conversations in the durable record (rows and rolled-up count, read together). */
export async function countCampaignConversations(pool: Pool, campaignId: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM link.conversations WHERE campaign_id = $1)
          + coalesce((SELECT conversations FROM link.campaign_rollups WHERE campaign_id = $1), 0) AS n`,
    [campaignId],
  );
  return Number(rows[0].n);
}

/**
 * Folds up to `limit` conversations started before `before` into their recipient's and their
 * campaign's rolled-up counts and deletes them, in one statement (so one transaction); returns
 * how many. Rows another roll-up holds are skipped, so replicas rolling up at once never fold a
 * row twice, and counts are added in id order, so they cannot deadlock either. Conversations the
 * previous version wrote and never announced stay until announced (migration 002).
 */
export async function rollUpConversations(pool: Pool, before: Date, limit: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>({
    name: 'link-roll-up-conversations',
    text: `WITH folded AS (
             DELETE FROM link.conversations WHERE ctid IN (
               SELECT ctid FROM link.conversations
                WHERE started_at < $1 AND published_at IS NOT NULL
                LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING recipient_id, campaign_id
           ), recipients AS (
             INSERT INTO link.recipient_rollups AS r (recipient_id, conversations)
             SELECT recipient_id, count(*) FROM folded GROUP BY recipient_id ORDER BY recipient_id
             ON CONFLICT (recipient_id) DO UPDATE SET conversations = r.conversations + EXCLUDED.conversations
           ), campaigns AS (
             INSERT INTO link.campaign_rollups AS c (campaign_id, conversations)
             SELECT campaign_id, count(*) FROM folded GROUP BY campaign_id ORDER BY campaign_id
             ON CONFLICT (campaign_id) DO UPDATE SET conversations = c.conversations + EXCLUDED.conversations
           )
           SELECT count(*)::int AS n FROM folded`,
    values: [before, limit],
  });
  return rows[0].n;
}

/** Marks batches whose event JetStream confirmed, at `at` (they are kept for a replay: migration 004). */
export async function confirmBatches(
  pool: Pool | PoolClient,
  ids: readonly string[],
  at: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await pool.query({
    name: 'link-confirm-usage-batches',
    text: 'UPDATE link.usage_batches SET confirmed_at = $2 WHERE id = ANY($1::text[]) AND confirmed_at IS NULL',
    values: [ids, at],
  });
}

/** Batches written before `before` whose event was not confirmed yet (oldest first). */
export async function listUnconfirmed(
  pool: Pool | PoolClient,
  before: Date,
  limit: number,
): Promise<UsageBatch[]> {
  const { rows } = await pool.query<{ id: string; event: string; created_at: Date }>(
    `SELECT id, event, created_at FROM link.usage_batches
      WHERE confirmed_at IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({ id: r.id, event: r.event, createdAt: r.created_at }));
}

/**
 * Marks, inside the caller's transaction, a replay of the batches confirmed before `before` as due
 * (see `replayDue`); `before` comes from the clock that stamps confirmations.
 */
export async function markReplayDue(client: PoolClient, stream: string, before: Date): Promise<void> {
  await client.query('UPDATE link.stream_epochs SET replay_before = $2 WHERE name = $1', [stream, before]);
}

/** The instant before which confirmed batches are to be published again for `stream`, while a replay is due. */
export async function replayDue(pool: Pool, stream: string): Promise<Date | undefined> {
  const { rows } = await pool.query<{ replay_before: Date | null }>(
    'SELECT replay_before FROM link.stream_epochs WHERE name = $1',
    [stream],
  );
  return rows[0]?.replay_before ?? undefined;
}

/**
 * Marks the batches confirmed before `before` unconfirmed again, so that the sweeper publishes
 * each once more, a page at a time (rows another replica is marking are skipped), then ends the
 * replay marked at `before`; returns how many.
 */
export async function unconfirmForReplay(
  pool: Pool,
  stream: string,
  before: Date,
  pageSize = 5000,
): Promise<number> {
  const marked = await inPages(async (limit) => {
    const { rowCount } = await pool.query(
      `UPDATE link.usage_batches SET confirmed_at = NULL, replayed_at = $1 WHERE ctid IN (
         SELECT ctid FROM link.usage_batches WHERE confirmed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [before, limit],
    );
    return rowCount ?? 0;
  }, pageSize);
  // Ended only once no row it covers is left: one that another replica's statement was marking
  // when this one skipped it, and that rolled back (a timeout, a crash), is marked next time.
  await pool.query(
    `UPDATE link.stream_epochs SET replay_before = NULL
      WHERE name = $1 AND replay_before <= $2
        AND NOT EXISTS (SELECT 1 FROM link.usage_batches WHERE confirmed_at < $2)`,
    [stream, before],
  );
  return marked;
}

/** Deletes batches confirmed before `before`, a page at a time (rows another replica deletes are skipped); returns how many. */
export async function pruneConfirmedBatches(pool: Pool, before: Date, pageSize = 10_000): Promise<number> {
  return inPages(async (limit) => {
    const { rowCount } = await pool.query(
      `DELETE FROM link.usage_batches WHERE ctid IN (
         SELECT ctid FROM link.usage_batches WHERE confirmed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [before, limit],
    );
    return rowCount ?? 0;
  }, pageSize);
}

/**
 * Conversations the previous version wrote before `before` and never announced (each is
 * announced as a batch of its own, under its id), oldest first. Goes with migration 002's
 * contract step.
 */
export async function listLegacyUnpublished(
  pool: Pool,
  before: Date,
  limit: number,
): Promise<ConversationRecord[]> {
  const { rows } = await pool.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM link.conversations
     WHERE published_at IS NULL AND started_at < $1 ORDER BY started_at LIMIT $2`,
    [before, limit],
  );
  return rows.map(conversationOf);
}

/** Marks a conversation of the previous version announced. */
export async function markLegacyPublished(pool: Pool, id: string, at: Date): Promise<void> {
  await pool.query('UPDATE link.conversations SET published_at = $2 WHERE id = $1', [id, at]);
}

/** What waits in the outbox, as the gauges report it. */
export interface UsageBacklog {
  /** Batches whose first event JetStream has not confirmed, and when the oldest was written. */
  count: number;
  oldest: Date | null;
  /** Kept batches a replay made unconfirmed again, waiting to be published once more. */
  replaying: number;
}

/** The unconfirmed batches, new ones apart from those a replay is publishing again (migration 005). */
export async function unconfirmedBacklog(pool: Pool): Promise<UsageBacklog> {
  const { rows } = await pool.query<{ n: number; oldest: Date | null; replaying: number }>(
    `SELECT count(*) FILTER (WHERE replayed_at IS NULL)::int AS n,
            min(created_at) FILTER (WHERE replayed_at IS NULL) AS oldest,
            count(*) FILTER (WHERE replayed_at IS NOT NULL)::int AS replaying
       FROM link.usage_batches WHERE confirmed_at IS NULL`,
  );
  const { n, oldest, replaying } = rows[0];
  return { count: n, oldest, replaying };
}
