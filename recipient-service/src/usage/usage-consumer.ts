import { subjects, type UsageAdmitted } from '@outreach/contracts';
import { consumeDurable, decodeJson, type Logger, streamNames, withTransaction } from '@outreach/platform';
import type { JetStreamClient, JetStreamManager } from 'nats';
import type { Pool } from 'pg';

/**
 * Applies one admitted conversation to its recipient exactly once: the conversation id
 * is recorded in the same transaction as the increment, so a redelivered event changes
 * nothing. Returns true when it was applied now.
 */
export async function applyUsage(pool: Pool, event: UsageAdmitted): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const seen = await client.query(
      `INSERT INTO recipients.applied_usage (conversation_id, recipient_id) VALUES ($1, $2)
       ON CONFLICT (conversation_id) DO NOTHING`,
      [event.conversationId, event.recipientId],
    );
    if (seen.rowCount === 0) return false;
    // A deleted recipient simply has no row to update; the conversation still counts as seen.
    await client.query(
      `UPDATE recipients.recipients
          SET interaction_count = interaction_count + 1,
              last_interaction_at = GREATEST(last_interaction_at, $2::timestamptz)
        WHERE id = $1`,
      [event.recipientId, event.startedAt],
    );
    return true;
  });
}

/** The durable consumer of usage events, shared by every instance. */
export const usageDurable = (prefix: string): string => `${prefix}-recipients-usage`;

/** Consumes UsageAdmitted events with a durable consumer and applies each once. */
export function consumeUsage(deps: {
  pool: Pool;
  js: JetStreamClient;
  jsm: JetStreamManager;
  prefix: string;
  logger: Logger;
}): Promise<() => Promise<void>> {
  return consumeDurable(
    deps.js,
    deps.jsm,
    {
      stream: streamNames(deps.prefix).events,
      durable: usageDurable(deps.prefix),
      filterSubject: subjects(deps.prefix).usageAdmitted,
      deliver: 'all',
    },
    async (msg) => {
      const { data } = decodeJson<UsageAdmitted>(msg);
      if (!data || typeof data.conversationId !== 'string' || typeof data.recipientId !== 'string') {
        deps.logger.warn({ subject: msg.subject }, 'ignoring malformed usage event');
        return;
      }
      await applyUsage(deps.pool, data);
    },
    deps.logger,
  );
}
