import { IDEMPOTENCY_TTL_MS } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';

/** A create's Idempotency-Key as the gateway passes it: the key (hashed with its API key's id) and what was asked. */
export interface CreateKey {
  key: string;
  fingerprint: string;
}

/** The recorded table, pruned like the applied-usage records (server.ts). */
export const IDEMPOTENT_CREATES_TABLE = 'recipients.idempotent_creates';
/** The gateway replays a key for a day; its record is kept a day longer. */
export const IDEMPOTENT_CREATES_RETENTION_DAYS = 2;

/** Thrown inside a create's transaction when another create under its key committed first. */
export class CreatedBefore extends Error {
  constructor() {
    super('a create under this idempotency key committed first');
  }
}

/** Records made before this instant answer nothing: a key is free again after the TTL. */
const since = (now: Date) => new Date(now.getTime() - IDEMPOTENCY_TTL_MS);

/**
 * The answer of the create recorded under `key` within the TTL (parsed JSON), or null when none
 * is. A key recorded for another request is refused, as the gateway refuses it while it holds it.
 */
export async function recordedCreate(
  db: Pool | PoolClient,
  key: CreateKey,
  now: Date,
): Promise<unknown | null> {
  const { rows } = await db.query<{ fingerprint: string; outcome: string }>(
    'SELECT fingerprint, outcome FROM recipients.idempotent_creates WHERE key = $1 AND applied_at > $2',
    [key.key, since(now)],
  );
  if (rows.length === 0) return null;
  if (rows[0].fingerprint !== key.fingerprint) {
    throw new AppError('idempotency_key_reused', undefined, { details: { header: 'Idempotency-Key' } });
  }
  return JSON.parse(rows[0].outcome);
}

/**
 * Claims `key` first thing in a create's transaction. A create under the same key still running
 * holds the row: this waits for it, then throws `CreatedBefore` when it committed (its answer is
 * the answer), or claims the key when it rolled back (nothing was made). A record past the TTL,
 * not pruned yet, is taken over.
 */
export async function claimCreate(client: PoolClient, key: CreateKey, now: Date): Promise<void> {
  const { rowCount } = await client.query(
    `INSERT INTO recipients.idempotent_creates AS c (key, fingerprint, outcome, applied_at)
     VALUES ($1, $2, '', $3)
     ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, outcome = '', applied_at = excluded.applied_at
       WHERE c.applied_at <= $4`,
    [key.key, key.fingerprint, now, since(now)],
  );
  if (rowCount === 0) throw new CreatedBefore();
}

/** Records the answer of the create that claimed `key`, in its transaction. */
export async function recordCreate(client: PoolClient, key: CreateKey, outcome: unknown): Promise<void> {
  await client.query('UPDATE recipients.idempotent_creates SET outcome = $2 WHERE key = $1', [
    key.key,
    JSON.stringify(outcome),
  ]);
}
