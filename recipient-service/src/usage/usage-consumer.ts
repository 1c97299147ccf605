import { readAdmitted, subjects, USAGE_BATCHING, type UsageAdmitted } from '@outreach/contracts';
import {
  type Clock,
  consumeDurableBatches,
  inPages,
  type JsMsg,
  type Logger,
  parseBatch,
  runPeriodically,
  streamNames,
} from '@outreach/platform';
import type { JetStreamClient, JetStreamManager } from 'nats';
import type { Pool } from 'pg';

/** The part of a usage event this service applies; `startedAt` null when the event had none. */
export interface UsageToApply {
  conversationId: string;
  recipientId: string;
  startedAt: string | null;
}

/** Reads the usage of each conversation a usage event reports that can be applied (see `readAdmitted`). */
export function usagesFromEvent(data: unknown): UsageToApply[] | undefined {
  return readAdmitted(data, usageOf);
}

function usageOf(data: unknown): UsageToApply | undefined {
  const event = data as Partial<UsageAdmitted> | null;
  if (typeof event?.conversationId !== 'string' || typeof event.recipientId !== 'string') return undefined;
  // PostgreSQL text cannot hold NUL.
  if (event.conversationId.includes('\0') || event.recipientId.includes('\0')) return undefined;
  if (event.startedAt === undefined || event.startedAt === null)
    return { conversationId: event.conversationId, recipientId: event.recipientId, startedAt: null };
  const started = typeof event.startedAt === 'string' ? new Date(event.startedAt) : undefined;
  if (!started || Number.isNaN(started.getTime())) return undefined;
  return {
    conversationId: event.conversationId,
    recipientId: event.recipientId,
    startedAt: started.toISOString(),
  };
}

/**
 * Applies admitted conversations to their recipients exactly once, in one statement (and so one
 * transaction): the conversation ids are recorded in `applied_usage`, and only the newly recorded
 * ones add to their recipient's count and move its last interaction forward. A redelivered or
 * repeated conversation id changes nothing. Returns how many conversations were applied now.
 */
export async function applyUsageBatch(pool: Pool, batch: UsageToApply[]): Promise<number> {
  // First occurrence of an id wins; sorted so concurrent batches take row locks in one order.
  const byId = new Map<string, UsageToApply>();
  for (const usage of batch) if (!byId.has(usage.conversationId)) byId.set(usage.conversationId, usage);
  if (byId.size === 0) return 0;
  const usages = [...byId.values()].sort((a, b) => (a.conversationId < b.conversationId ? -1 : 1));
  const result = await pool.query<{ applied: number }>({
    name: 'recipients-apply-usage-batch',
    text: `WITH incoming AS (
             SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
                        AS u (conversation_id, recipient_id, started_at)
           ), applied AS (
             INSERT INTO recipients.applied_usage (conversation_id, recipient_id)
             SELECT conversation_id, recipient_id FROM incoming
             ON CONFLICT (conversation_id) DO NOTHING
             RETURNING conversation_id
           ), per_recipient AS (
             SELECT i.recipient_id, count(*)::int AS n, max(i.started_at) AS last_at
               FROM applied a JOIN incoming i USING (conversation_id)
              GROUP BY i.recipient_id
           ), locked AS MATERIALIZED (
             -- Row locks in id order: two instances applying overlapping batches cannot deadlock.
             SELECT r.id FROM recipients.recipients r
              WHERE r.id IN (SELECT recipient_id FROM per_recipient)
              ORDER BY r.id FOR UPDATE
           ), updated AS (
             -- A deleted recipient has no row to update; its conversations still count as seen.
             UPDATE recipients.recipients r
                SET interaction_count = r.interaction_count + p.n,
                    last_interaction_at = GREATEST(r.last_interaction_at, p.last_at)
               FROM per_recipient p JOIN locked l ON l.id = p.recipient_id
              WHERE r.id = p.recipient_id
             RETURNING r.id
           )
           SELECT (SELECT count(*) FROM applied)::int AS applied`,
    values: [
      usages.map((u) => u.conversationId),
      usages.map((u) => u.recipientId),
      usages.map((u) => u.startedAt),
    ],
  });
  return result.rows[0].applied;
}

/**
 * Forgets applied conversation ids recorded before `before`, `pageSize` rows per statement, and
 * returns how many. A usage event is delivered again only while the events stream still holds it
 * (7 days) or when a link runtime republishes a batch it never saw confirmed, so a record older
 * than that recognises nothing; kept forever, it would grow by every conversation.
 */
export async function pruneAppliedUsage(pool: Pool, before: Date, pageSize = 10_000): Promise<number> {
  return inPages(async (limit) => {
    const { rowCount } = await pool.query({
      name: 'recipients-prune-applied-usage',
      text: `DELETE FROM recipients.applied_usage WHERE ctid IN (
               SELECT ctid FROM recipients.applied_usage WHERE applied_at < $1 LIMIT $2
               FOR UPDATE SKIP LOCKED)`,
      values: [before, limit],
    });
    return rowCount ?? 0;
  }, pageSize);
}

/** Prunes applied usage older than `retentionDays` now and then every `everyMs`; returns the stop. */
export function prunePeriodically(
  deps: { pool: Pool; logger: Logger; clock: Clock },
  retentionDays: number,
  everyMs = 3600_000,
): () => Promise<void> {
  return runPeriodically(
    async () => {
      const before = new Date(deps.clock().getTime() - retentionDays * 86_400_000);
      const pruned = await pruneAppliedUsage(deps.pool, before);
      if (pruned > 0) deps.logger.info({ pruned, before }, 'applied usage pruned');
    },
    everyMs,
    deps.logger,
    'pruning applied usage failed; will retry',
  );
}

/** The durable consumers of usage events, shared by every instance: single events, and batches. */
export const usageDurable = (prefix: string): string => `${prefix}-recipients-usage`;
export const usageBatchDurable = (prefix: string): string => `${prefix}-recipients-usage-batches`;

/**
 * Consumes usage events with durable consumers and applies each batch of them once: batch
 * events from link runtimes, and single events (from link runtimes of an older version) on
 * their own subject and consumer, which an older instance of this service shares.
 */
export function consumeUsage(deps: {
  pool: Pool;
  js: JetStreamClient;
  jsm: JetStreamManager;
  prefix: string;
  logger: Logger;
}): Promise<() => Promise<void>> {
  const names = subjects(deps.prefix);
  const stream = streamNames(deps.prefix).events;
  return consumeDurableBatches(
    deps.js,
    deps.jsm,
    [
      {
        stream,
        durable: usageBatchDurable(deps.prefix),
        filterSubject: names.usageAdmittedBatch,
        deliver: 'all',
      },
      { stream, durable: usageDurable(deps.prefix), filterSubject: names.usageAdmitted, deliver: 'all' },
    ],
    async (msgs: JsMsg[]) => {
      await applyUsageBatch(deps.pool, parseBatch(msgs, usagesFromEvent, deps.logger, 'usage event').flat());
    },
    deps.logger,
    USAGE_BATCHING,
  );
}
