import { readAdmitted, subjects, USAGE_BATCHING, type UsageAdmitted } from '@outreach/contracts';
import {
  consumeDurableBatches,
  type JetStreamClient,
  type JsMsg,
  type Logger,
  parseBatch,
  streamNames,
} from '@outreach/platform';
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

/** Durable names allow no dots or wildcards; the prefix may contain them. */
export function durableName(prefix: string, role: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_campaign_${role}`;
}

/**
 * Consumes usage events in batches with durable consumers shared by every instance, so a
 * service that was down picks up where it stopped: batch events from link runtimes (role
 * `usage-batches`), and single events (from link runtimes of an older version) on their own
 * subject and consumer (role `usage`), which an older instance of this service shares.
 */
export function consumeUsage(
  js: JetStreamClient,
  jsm: JetStreamManager,
  pool: Pool,
  prefix: string,
  logger: Logger,
): Promise<() => Promise<void>> {
  const names = subjects(prefix);
  const stream = streamNames(prefix).events;
  return consumeDurableBatches(
    js,
    jsm,
    [
      {
        stream,
        durable: durableName(prefix, 'usage-batches'),
        filterSubject: names.usageAdmittedBatch,
        deliver: 'all',
      },
      { stream, durable: durableName(prefix, 'usage'), filterSubject: names.usageAdmitted, deliver: 'all' },
    ],
    async (msgs: JsMsg[]) => {
      await recordUsageBatch(pool, parseBatch(msgs, usagesFromEvent, logger, 'usage event').flat());
    },
    logger,
    USAGE_BATCHING,
  );
}
