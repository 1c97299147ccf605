import { subjects, type UsageAdmitted } from '@outreach/contracts';
import {
  consumeDurable,
  decodeJson,
  type JetStreamClient,
  type Logger,
  streamNames,
} from '@outreach/platform';
import type { JetStreamManager } from 'nats';
import type { Pool } from 'pg';

/** Records one admitted conversation; a redelivered or duplicated event changes nothing. */
export async function recordUsage(pool: Pool, event: UsageAdmitted): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO conversations (conversation_id, campaign_id, project_id, recipient_id, started_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (conversation_id) DO NOTHING`,
    [event.conversationId, event.campaignId, event.projectId, event.recipientId, new Date(event.startedAt)],
  );
  return result.rowCount === 1;
}

/** Durable names allow no dots or wildcards; the prefix may contain them. */
export function durableName(prefix: string, role: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_campaign_${role}`;
}

/**
 * Consumes UsageAdmitted events with a durable consumer shared by every instance, so a
 * service that was down picks up where it stopped.
 */
export function consumeUsage(
  js: JetStreamClient,
  jsm: JetStreamManager,
  pool: Pool,
  prefix: string,
  logger: Logger,
): Promise<() => Promise<void>> {
  return consumeDurable(
    js,
    jsm,
    {
      stream: streamNames(prefix).events,
      durable: durableName(prefix, 'usage'),
      filterSubject: subjects(prefix).usageAdmitted,
      deliver: 'all',
    },
    async (msg) => {
      const { data } = decodeJson<UsageAdmitted>(msg);
      if (typeof data?.conversationId !== 'string' || typeof data.campaignId !== 'string') {
        // A malformed event can never succeed; dropping it keeps the consumer moving.
        logger.warn({ subject: msg.subject, seq: msg.seq }, 'malformed UsageAdmitted event dropped');
        return;
      }
      await recordUsage(pool, data);
    },
    logger,
  );
}
