import {
  distinctBatches,
  readAdmitted,
  type UsageAdmitted,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { consumeUsageEvents, type JetStreamClient, type Logger } from '@outreach/platform';
import type { JetStreamManager } from 'nats';
import type { Pool } from 'pg';

/** One admitted conversation as it is recorded. */
export interface Usage {
  conversationId: string;
  campaignId: string;
  projectId: string;
  recipientId: string;
  startedAt: Date;
}

/** Reads each conversation a usage event reports that can be recorded (see `readAdmitted`). */
export function usagesFromEvent(data: unknown): Usage[] | undefined {
  return readAdmitted(data, usageOf);
}

function usageOf(data: unknown): Usage | undefined {
  const event = data as Partial<UsageAdmitted> | null;
  const ids = [event?.conversationId, event?.campaignId, event?.projectId, event?.recipientId];
  // PostgreSQL text cannot hold NUL.
  if (!ids.every((id): id is string => typeof id === 'string' && !id.includes('\0'))) return undefined;
  const startedAt = typeof event?.startedAt === 'string' ? new Date(event.startedAt) : undefined;
  if (!startedAt || Number.isNaN(startedAt.getTime())) return undefined;
  const [conversationId, campaignId, projectId, recipientId] = ids;
  return { conversationId, campaignId, projectId, recipientId, startedAt };
}

/**
 * Records admitted conversations in one statement; a conversation id already recorded (a
 * redelivered or duplicated event, in this batch or an earlier one) changes nothing.
 * Returns how many were recorded now.
 */
export async function recordUsageBatch(pool: Pool, batch: Usage[]): Promise<number> {
  // First occurrence of an id wins; sorted so concurrent batches meet in one order.
  const byId = new Map<string, Usage>();
  for (const usage of batch) if (!byId.has(usage.conversationId)) byId.set(usage.conversationId, usage);
  if (byId.size === 0) return 0;
  const usages = [...byId.values()].sort((a, b) => (a.conversationId < b.conversationId ? -1 : 1));
  const result = await pool.query({
    name: 'campaigns-record-usage-batch',
    text: `INSERT INTO conversations (conversation_id, campaign_id, project_id, recipient_id, started_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
           ON CONFLICT (conversation_id) DO NOTHING`,
    values: [
      usages.map((u) => u.conversationId),
      usages.map((u) => u.campaignId),
      usages.map((u) => u.projectId),
      usages.map((u) => u.recipientId),
      usages.map((u) => u.startedAt),
    ],
  });
  return result.rowCount ?? 0;
}

/** Where this service records the usage batches it applied. */
export const APPLIED_USAGE_TABLES = ['campaigns.applied_usage_batches'] as const;

// Quarter hours as the ledger bins them (012: date_bin of 15 minutes from 2000-01-01 UTC, an
// instant a whole number of quarter hours after the Unix epoch, so bins align with the epoch's).
const QUARTER_MS = 15 * 60 * 1000;

/**
 * Records written batches of conversations (UsageStarts events) exactly once, in one
 * statement: the batch ids are recorded in `applied_usage_batches`, and only the newly recorded
 * batches add to their campaigns' totals and quarter-hour counts, binned as the ledger's
 * triggers bin (012). A batch's starts are counted here by campaign and quarter hour first, so
 * the statement gets a row per batch, campaign and quarter, not one per conversation. A batch
 * delivered again, alone or with others, changes nothing. Returns how many conversations were
 * recorded now.
 */
export async function recordUsageStarts(pool: Pool, batches: readonly UsageStartsBatch[]): Promise<number> {
  const counts = new Map<string, { batchId: string; campaignId: string; quarterMs: number; n: number }>();
  const distinct = distinctBatches(batches);
  for (const batch of distinct)
    for (const r of batch.recipients)
      for (const ms of r.startedAtMs) {
        const quarterMs = Math.floor(ms / QUARTER_MS) * QUARTER_MS;
        const key = `${batch.batchId} ${r.campaignId} ${quarterMs}`;
        const count = counts.get(key);
        if (count) count.n++;
        else counts.set(key, { batchId: batch.batchId, campaignId: r.campaignId, quarterMs, n: 1 });
      }
  if (distinct.length === 0) return 0;
  const rows = [...counts.values()];
  const result = await pool.query<{ recorded: number }>({
    name: 'campaigns-record-usage-quarters',
    text: `WITH incoming AS (
             SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[]) AS u (batch_id, campaign_id, quarter_ms, n)
           ), applied AS (
             INSERT INTO applied_usage_batches (batch_id)
             SELECT DISTINCT batch_id FROM incoming ORDER BY batch_id
             ON CONFLICT (batch_id) DO NOTHING
             RETURNING batch_id
           ), quarters AS (
             SELECT i.campaign_id, TIMESTAMPTZ 'epoch' + i.quarter_ms * INTERVAL '1 millisecond' AS quarter,
                    sum(i.n) AS n
               FROM applied a JOIN incoming i USING (batch_id)
              GROUP BY 1, 2
           ), totals AS (
             -- In campaign order, then campaign and quarter order, as the ledger's triggers add:
             -- concurrent writers of either kind take the rows' locks in one order.
             INSERT INTO campaign_usage AS u (campaign_id, used)
             SELECT campaign_id, sum(n) FROM quarters GROUP BY campaign_id ORDER BY campaign_id
             ON CONFLICT (campaign_id) DO UPDATE SET used = u.used + EXCLUDED.used
           ), counted AS (
             INSERT INTO campaign_usage_quarters AS q (campaign_id, quarter, conversations)
             SELECT campaign_id, quarter, n FROM quarters ORDER BY 1, 2
             ON CONFLICT (campaign_id, quarter) DO UPDATE SET conversations = q.conversations + EXCLUDED.conversations
           )
           SELECT coalesce((SELECT sum(n) FROM quarters), 0)::int AS recorded`,
    values: [
      rows.map((r) => r.batchId),
      rows.map((r) => r.campaignId),
      rows.map((r) => r.quarterMs),
      rows.map((r) => r.n),
    ],
  });
  return result.rows[0].recorded;
}

/** Durable names allow no dots or wildcards; the prefix may contain them. */
export function durableName(prefix: string, role: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_campaign_${role}`;
}

/**
 * Consumes usage events with durable consumers shared by every instance (see consumeUsageEvents):
 * written batches by recipient recorded once per batch, and conversations of older link runtimes
 * recorded once per conversation in the ledger.
 */
export function consumeUsage(
  js: JetStreamClient,
  jsm: JetStreamManager,
  pool: Pool,
  prefix: string,
  logger: Logger,
): Promise<() => Promise<void>> {
  return consumeUsageEvents(
    { js, jsm, prefix, logger },
    {
      durables: {
        starts: durableName(prefix, 'usage-starts'),
        batches: durableName(prefix, 'usage-batches'),
        single: durableName(prefix, 'usage'),
      },
      applyStarts: (batches) => recordUsageStarts(pool, batches),
      readConversations: usagesFromEvent,
      applyConversations: (usages) => recordUsageBatch(pool, usages),
    },
  );
}
