import type { JetStreamManager } from 'nats';
import type { PoolClient } from 'pg';
import { isStreamNotFound } from './nats';

// A JetStream stream that lost its files comes back empty, created anew: what was published into
// it is gone, and only its publishers can put it back. They tell such a stream from the one they
// published to by its creation instant, recorded in their own database.

/** What comparing a stream's creation instant with the one recorded found. */
export type StreamEpoch = 'same' | 'first' | 'new';

/** The creation instant of JetStream stream `name` as JetStream reports it, or undefined while it does not exist. */
export async function streamCreated(jsm: JetStreamManager, name: string): Promise<string | undefined> {
  try {
    return (await jsm.streams.info(name)).created;
  } catch (err) {
    if (isStreamNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Records `created` as stream `name`'s creation instant in `table` (as the caller's statements
 * name it, with columns `name`, `created`, `recorded_at`) inside the caller's transaction, and says
 * how it compares with the one recorded before: `new` when JetStream created the stream anew
 * since, `first` when none was recorded. Of concurrent transactions recording the same instant,
 * one sees `new` or `first`; the others wait for it to end, then see `same`.
 */
export async function recordStreamCreation(
  client: PoolClient,
  table: string,
  name: string,
  created: string,
): Promise<StreamEpoch> {
  const { rows } = await client.query<{ first: boolean }>(
    `INSERT INTO ${table} AS known (name, created, recorded_at) VALUES ($1, $2, now())
     ON CONFLICT (name) DO UPDATE SET created = EXCLUDED.created, recorded_at = EXCLUDED.recorded_at
       WHERE known.created <> EXCLUDED.created
     RETURNING xmax = 0 AS first`,
    [name, created],
  );
  if (rows.length === 0) return 'same';
  // xmax is 0 on a row this statement inserted, and set on one it updated.
  return rows[0].first ? 'first' : 'new';
}
