import {
  distinctBatches,
  readAdmitted,
  type UsageAdmitted,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { consumeUsageEvents, type Logger, pruneAppliedRecords } from '@outreach/platform';
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
 * The common tail of the statements below: adds `per_recipient (recipient_id, n, last_at)` to the
 * recipients' counts and moves their last interaction forward. A deleted recipient has no row
 * to update; what it started still counts as applied.
 */
const ADD_TO_RECIPIENTS = `locked AS MATERIALIZED (
             -- Row locks in id order: two instances applying overlapping batches cannot deadlock.
             SELECT r.id FROM recipients.recipients r
              WHERE r.id IN (SELECT recipient_id FROM per_recipient)
              ORDER BY r.id FOR UPDATE
           ), updated AS (
             UPDATE recipients.recipients r
                SET interaction_count = r.interaction_count + p.n,
                    last_interaction_at = GREATEST(r.last_interaction_at, p.last_at)
               FROM per_recipient p JOIN locked l ON l.id = p.recipient_id
              WHERE r.id = p.recipient_id
             RETURNING r.id
           )`;

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
           ), ${ADD_TO_RECIPIENTS}
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
 * Applies written batches of conversations (UsageStarts events) to their recipients exactly
 * once, in one statement: the batch ids are recorded in `applied_usage_batches`, and only the
 * newly recorded batches add to their recipients' counts and move their last interaction
 * forward. A batch delivered again, alone or with others, changes nothing. Returns how many
 * conversations were applied now.
 */
export async function applyUsageStarts(pool: Pool, batches: readonly UsageStartsBatch[]): Promise<number> {
  const batchIds: string[] = [];
  const recipientIds: string[] = [];
  const counts: number[] = [];
  const lastAt: Date[] = [];
  const distinct = distinctBatches(batches);
  for (const batch of distinct)
    for (const r of batch.recipients) {
      batchIds.push(batch.batchId);
      recipientIds.push(r.recipientId);
      counts.push(r.startedAtMs.length);
      lastAt.push(new Date(r.startedAtMs.reduce((a, b) => Math.max(a, b))));
    }
  if (distinct.length === 0) return 0;
  const result = await pool.query<{ applied: number }>({
    name: 'recipients-apply-usage-starts',
    text: `WITH incoming AS (
             SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[])
                        AS u (batch_id, recipient_id, n, last_at)
           ), applied AS (
             INSERT INTO recipients.applied_usage_batches (batch_id)
             SELECT DISTINCT batch_id FROM incoming ORDER BY batch_id
             ON CONFLICT (batch_id) DO NOTHING
             RETURNING batch_id
           ), per_recipient AS (
             SELECT i.recipient_id, sum(i.n)::int AS n, max(i.last_at) AS last_at
               FROM applied a JOIN incoming i USING (batch_id)
              GROUP BY i.recipient_id
           ), ${ADD_TO_RECIPIENTS}
           SELECT coalesce((SELECT sum(n) FROM per_recipient), 0)::int AS applied`,
    values: [batchIds, recipientIds, counts, lastAt],
  });
  return result.rows[0].applied;
}

/** Where this service records the usage it applied: conversation ids, and batch ids. */
export const APPLIED_USAGE_TABLES = ['recipients.applied_usage', 'recipients.applied_usage_batches'] as const;

/** Forgets applied usage records from before `before`, `pageSize` rows per statement; returns how many. */
export function pruneAppliedUsage(pool: Pool, before: Date, pageSize = 10_000): Promise<number> {
  return pruneAppliedRecords(pool, APPLIED_USAGE_TABLES, before, pageSize);
}

/** The durable consumers of usage events, shared by every instance: single events, and batches. */
export const usageDurable = (prefix: string): string => `${prefix}-recipients-usage`;
export const usageBatchDurable = (prefix: string): string => `${prefix}-recipients-usage-batches`;
export const usageStartsDurable = (prefix: string): string => `${prefix}-recipients-usage-starts`;

/**
 * Consumes usage events with durable consumers shared by every instance (see consumeUsageEvents):
 * written batches by recipient applied once per batch, and conversations of older link runtimes
 * applied once per conversation.
 */
export function consumeUsage(deps: {
  pool: Pool;
  js: JetStreamClient;
  jsm: JetStreamManager;
  prefix: string;
  logger: Logger;
}): Promise<() => Promise<void>> {
  return consumeUsageEvents(deps, {
    durables: {
      starts: usageStartsDurable(deps.prefix),
      batches: usageBatchDurable(deps.prefix),
      single: usageDurable(deps.prefix),
    },
    applyStarts: (batches) => applyUsageStarts(deps.pool, batches),
    readConversations: usagesFromEvent,
    applyConversations: (usages) => applyUsageBatch(deps.pool, usages),
  });
}
