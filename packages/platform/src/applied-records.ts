import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { VarSpec } from './config';
import { inPages } from './db';
import { runPeriodically } from './periodic';
import type { Clock } from './service';

// Consumers that apply events exactly once record what they applied (conversation or batch ids,
// each row with its `applied_at`). An event is delivered again only while the events stream still
// holds it (7 days) or when its publisher republishes one it never saw confirmed, so a record
// older than that recognises nothing; kept forever, it would grow by every event.

/** The retention of such records, one setting for every service that keeps them. */
export const APPLIED_RECORDS_CONFIG = {
  USAGE_DEDUP_RETENTION_DAYS: {
    type: 'int',
    default: 30,
    // The events stream keeps usage events 7 days: a record younger than that must stay.
    min: 8,
    max: 3650,
    doc: 'how long an applied usage record (conversation or batch id) is kept to recognise its event delivered again',
  },
} as const satisfies Record<string, VarSpec>;

/**
 * Deletes the records of `tables` (schema-qualified names) applied before `before`, `pageSize`
 * rows per statement (rows another replica is deleting are skipped), and returns how many.
 */
export async function pruneAppliedRecords(
  pool: Pool,
  tables: readonly string[],
  before: Date,
  pageSize = 10_000,
): Promise<number> {
  let pruned = 0;
  for (const table of tables)
    pruned += await inPages(async (limit) => {
      const { rowCount } = await pool.query({
        name: `prune-applied-${table}`,
        text: `DELETE FROM ${table} WHERE ctid IN (
                 SELECT ctid FROM ${table} WHERE applied_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        values: [before, limit],
      });
      return rowCount ?? 0;
    }, pageSize);
  return pruned;
}

/**
 * Prunes the records of `tables` older than `retentionDays` now and then every `everyMs`; returns
 * the stop. `what` names the records in the log (applied usage unless told).
 */
export function pruneAppliedPeriodically(
  deps: { pool: Pool; logger: Logger; clock: Clock; what?: string },
  tables: readonly string[],
  retentionDays: number,
  everyMs = 3600_000,
): () => Promise<void> {
  const what = deps.what ?? 'applied usage';
  return runPeriodically(
    async () => {
      const before = new Date(deps.clock().getTime() - retentionDays * 86_400_000);
      const pruned = await pruneAppliedRecords(deps.pool, tables, before);
      if (pruned > 0) deps.logger.info({ pruned, before }, `${what} pruned`);
    },
    everyMs,
    deps.logger,
    `pruning ${what} failed; will retry`,
  );
}
