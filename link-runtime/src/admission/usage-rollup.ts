import { type Clock, inPages, runPeriodically } from '@outreach/platform';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { rollUpConversations } from './conversations.repository';

// Rows per statement: each holds a pooled connection the starts' writes also use, briefly.
const ROLLUP_PAGE = 5000;

/**
 * Folds conversations started more than `afterDays` ago into their recipient's and campaign's
 * counts, now and then every `everyMs`, a page per statement until none is left; returns the stop.
 */
export function rollUpPeriodically(
  deps: { pool: Pool; logger: Logger; clock: Clock },
  afterDays: number,
  everyMs = 3600_000,
): () => Promise<void> {
  return runPeriodically(
    async () => {
      const before = new Date(deps.clock().getTime() - afterDays * 86_400_000);
      const folded = await inPages((limit) => rollUpConversations(deps.pool, before, limit), ROLLUP_PAGE);
      if (folded > 0) deps.logger.info({ folded, before }, 'old conversations rolled up');
    },
    everyMs,
    deps.logger,
    'rolling up old conversations failed; will retry',
  );
}
