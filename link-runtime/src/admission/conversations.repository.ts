import type { Pool } from 'pg';

/** One admitted conversation, as recorded durably. */
export interface ConversationRecord {
  id: string;
  recipientId: string;
  campaignId: string;
  projectId: string;
  startedAt: Date;
}

/** What the counters of one admission are rebuilt from. */
export interface UsageFacts {
  recipientCount: number;
  campaignCount: number;
  windowStarts: { id: string; startedAtMs: number }[];
}

/**
 * Inserts many conversations in one statement; a retried id is ignored, never counted twice.
 * The rows go as five arrays, so every batch size shares one prepared statement.
 */
export async function insertConversations(pool: Pool, rows: readonly ConversationRecord[]): Promise<void> {
  await pool.query({
    name: 'link-insert-conversations',
    text: `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
           ON CONFLICT (id) DO NOTHING`,
    values: [
      rows.map((r) => r.id),
      rows.map((r) => r.recipientId),
      rows.map((r) => r.campaignId),
      rows.map((r) => r.projectId),
      rows.map((r) => r.startedAt),
    ],
  });
}

/** Counts of the durable record: per recipient, per campaign, and the recipient's starts after `since`. */
export async function loadUsageFacts(
  pool: Pool,
  recipientId: string,
  campaignId: string,
  since: Date | null,
): Promise<UsageFacts> {
  const [rc, cc, starts] = await Promise.all([
    pool.query<{ n: string }>('SELECT count(*) AS n FROM link.conversations WHERE recipient_id = $1', [
      recipientId,
    ]),
    pool.query<{ n: string }>('SELECT count(*) AS n FROM link.conversations WHERE campaign_id = $1', [
      campaignId,
    ]),
    since
      ? pool.query<{ id: string; started_at: Date }>(
          'SELECT id, started_at FROM link.conversations WHERE recipient_id = $1 AND started_at > $2',
          [recipientId, since],
        )
      : Promise.resolve({ rows: [] as { id: string; started_at: Date }[] }),
  ]);
  return {
    recipientCount: Number(rc.rows[0].n),
    campaignCount: Number(cc.rows[0].n),
    windowStarts: starts.rows.map((r) => ({ id: r.id, startedAtMs: r.started_at.getTime() })),
  };
}

/** Marks conversations whose UsageAdmitted event JetStream acknowledged. */
export async function markPublished(pool: Pool, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await pool.query({
    name: 'link-mark-published',
    text: 'UPDATE link.conversations SET published_at = $2 WHERE id = ANY($1::text[])',
    values: [ids, at],
  });
}

/** Conversations recorded before `before` whose event was not acknowledged yet (oldest first). */
export async function listUnpublished(
  pool: Pool,
  before: Date,
  limit: number,
): Promise<ConversationRecord[]> {
  const { rows } = await pool.query<{
    id: string;
    recipient_id: string;
    campaign_id: string;
    project_id: string;
    started_at: Date;
  }>(
    `SELECT id, recipient_id, campaign_id, project_id, started_at FROM link.conversations
     WHERE published_at IS NULL AND started_at < $1 ORDER BY started_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    recipientId: r.recipient_id,
    campaignId: r.campaign_id,
    projectId: r.project_id,
    startedAt: r.started_at,
  }));
}
