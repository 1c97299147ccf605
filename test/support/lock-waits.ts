import type { Client, Pool } from 'pg';

/**
 * How many queries of the current database wait for a lock, those whose text matches the LIKE
 * pattern `like` when given. Clears the statistics snapshot first: inside a transaction (the one
 * holding the lock, say) pg_stat_activity otherwise goes on showing each backend's query as at the
 * transaction's first read of it, so a poll would never see a query sent after that.
 */
export async function lockWaiters(db: Client | Pool, like?: string): Promise<number> {
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND ($1::text IS NULL OR query LIKE $1)`,
    [like ?? null],
  );
  return rows[0].n;
}
