import { createHash } from 'node:crypto';
import { type ApiKeySnapshot, subjects } from '@outreach/contracts';
import { AppError, newId, type OutboxMessage, randomBase62, withTransaction } from '@outreach/platform';
import type { PoolClient } from 'pg';
import { recordActivity } from '../activity/activity.service';
import type { CampaignDeps } from '../deps';
import { enqueue } from '../events/outbox';
import { assertProject } from '../projects/projects.service';

/** Keys look like `ork_` + 40 base62 characters (about 238 bits from the CSPRNG). */
export const KEY_PREFIX = 'ork_';
/** Default per-key rate limit, requests a minute. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** The stored hash of a presented key: hex SHA-256. Keys are high-entropy, so no slow hash is needed. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** An API key as listed: never its secret. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expiresAt: string | null;
  rateLimitPerMinute: number;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The grant VerifyApiKey returns. */
export interface ApiKeyGrant {
  keyId: string;
  projectId: string;
  scopes: string[];
  rateLimitPerMinute: number;
  expiresAt: string | null;
}

interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expires_at: Date | null;
  rate_limit_per_minute: number;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  version: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const toInfo = (r: KeyRow): ApiKeyInfo => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  expiresAt: iso(r.expires_at),
  rateLimitPerMinute: r.rate_limit_per_minute,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: iso(r.last_used_at),
  revokedAt: iso(r.revoked_at),
});

const snapshot = (r: KeyRow): ApiKeySnapshot => ({
  id: r.id,
  projectId: r.project_id,
  revoked: r.revoked_at !== null,
  version: r.version,
});

/** Every API key's snapshot as the outbox would carry it, under the lock `lockedCampaignSnapshots` takes. */
export async function lockedApiKeySnapshots(
  client: PoolClient,
  natsPrefix: string,
): Promise<OutboxMessage[]> {
  await client.query('LOCK TABLE api_keys IN SHARE MODE');
  const { rows } = await client.query<KeyRow>('SELECT * FROM api_keys ORDER BY id');
  const subject = subjects(natsPrefix).apiKeyState;
  return rows.map((r) => ({ subject: subject(r.id), payload: snapshot(r) }));
}

/** Input of `createApiKey`. */
export interface CreateApiKeyInput {
  name: string;
  scopes: string[];
  expiresAt?: string | null;
  rateLimitPerMinute?: number;
}

/** Creates a key; the returned `key` is the only time the secret is ever shown. */
export async function createApiKey(
  deps: CampaignDeps,
  projectId: string,
  input: CreateApiKeyInput,
): Promise<ApiKeyInfo & { key: string }> {
  await assertProject(deps.pool, projectId);
  const now = deps.clock();
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) {
    throw new AppError('invalid_request', 'expiresAt must be in the future.', {
      details: { problems: [{ pointer: '/expiresAt', rule: 'future', message: 'must be in the future' }] },
    });
  }
  const key = `${KEY_PREFIX}${randomBase62(40)}`;
  const row = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<KeyRow>(
      `INSERT INTO api_keys (id, project_id, name, prefix, key_hash, scopes, expires_at, rate_limit_per_minute, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        newId('key'),
        projectId,
        input.name,
        key.slice(0, KEY_PREFIX.length + 6),
        hashApiKey(key),
        [...new Set(input.scopes)],
        input.expiresAt ? new Date(input.expiresAt) : null,
        input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
        now,
      ],
    );
    await enqueue(client, subjects(deps.natsPrefix).apiKeyState(rows[0].id), snapshot(rows[0]));
    const scopes = rows[0].scopes.join(', ');
    await recordActivity(client, deps, {
      projectId,
      action: 'api_key.created',
      targetId: rows[0].id,
      targetName: rows[0].name,
      detail: scopes,
    });
    return rows[0];
  });
  deps.afterCommit();
  return { ...toInfo(row), key };
}

/** The project's keys, oldest first, without secrets. */
export async function listApiKeys(deps: CampaignDeps, projectId: string): Promise<ApiKeyInfo[]> {
  await assertProject(deps.pool, projectId);
  const { rows } = await deps.pool.query<KeyRow>(
    'SELECT * FROM api_keys WHERE project_id = $1 ORDER BY created_at, id COLLATE "C"',
    [projectId],
  );
  return rows.map(toInfo);
}

/**
 * Revokes a key (idempotent) and publishes its snapshot so every gateway drops it from
 * its cache at once instead of waiting for a cache expiry.
 */
export async function revokeApiKey(
  deps: CampaignDeps,
  projectId: string,
  keyId: string,
): Promise<ApiKeyInfo> {
  const row = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<KeyRow>(
      'SELECT * FROM api_keys WHERE id = $1 AND project_id = $2 FOR UPDATE',
      [keyId, projectId],
    );
    if (rows.length === 0) throw new AppError('not_found', 'API key not found.', { details: { keyId } });
    if (rows[0].revoked_at !== null) return rows[0];
    const updated = await client.query<KeyRow>(
      'UPDATE api_keys SET revoked_at = $2, version = version + 1 WHERE id = $1 RETURNING *',
      [keyId, deps.clock()],
    );
    await enqueue(client, subjects(deps.natsPrefix).apiKeyState(keyId), snapshot(updated.rows[0]));
    await recordActivity(client, deps, {
      projectId,
      action: 'api_key.revoked',
      targetId: keyId,
      targetName: updated.rows[0].name,
    });
    return updated.rows[0];
  });
  deps.afterCommit();
  return toInfo(row);
}

// PostgreSQL's code for a lock not granted within lock_timeout.
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Writes a key's lastUsedAt, unless the keys are locked: a republish of every snapshot holds them
 * (see lockedApiKeySnapshots), and an API request should not wait for it; the next use a minute
 * later writes it then.
 */
async function touchLastUsed(deps: CampaignDeps, keyId: string, now: Date): Promise<void> {
  try {
    await withTransaction(deps.pool, async (client) => {
      await client.query("SET LOCAL lock_timeout = '100ms'");
      // Conditional so that concurrent verifications on several instances write once.
      await client.query(
        `UPDATE api_keys SET last_used_at = $2
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 minute')`,
        [keyId, now],
      );
    });
  } catch (err) {
    if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
  }
}

/**
 * Looks a presented key up by hash. Unknown, revoked and expired keys are the same
 * `unauthorized` so that a caller learns nothing about which keys exist.
 * `lastUsedAt` is written at most once a minute per key (see touchLastUsed).
 */
export async function verifyApiKeyHash(deps: CampaignDeps, keyHash: string): Promise<ApiKeyGrant> {
  const { rows } = await deps.pool.query<KeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash]);
  const now = deps.clock();
  const row = rows[0];
  if (
    !row ||
    row.revoked_at !== null ||
    (row.expires_at !== null && row.expires_at.getTime() <= now.getTime())
  ) {
    throw new AppError('unauthorized', 'The API key is not valid.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  if (row.last_used_at === null || now.getTime() - row.last_used_at.getTime() >= 60_000)
    await touchLastUsed(deps, row.id, now);
  return {
    keyId: row.id,
    projectId: row.project_id,
    scopes: row.scopes,
    rateLimitPerMinute: row.rate_limit_per_minute,
    expiresAt: iso(row.expires_at),
  };
}
