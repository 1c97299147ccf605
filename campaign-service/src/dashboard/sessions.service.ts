import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { OperatorDeps } from './operators.service';

/** Sessions end this long after sign-in, whatever the activity. */
export const SESSION_MAX_AGE_MS = 12 * 3600_000;
/** Sessions also end after this long without a request. */
export const SESSION_IDLE_MS = 2 * 3600_000;

/** A live session: who is signed in and the session's CSRF token. */
export interface Session {
  operatorId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** The stored form of a session id: hex SHA-256 (ids are 256 random bits, so no slow hash is needed). */
export function hashSessionId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/** Starts a session; returns the id for the cookie (never stored) and the session. */
export async function createSession(
  deps: OperatorDeps,
  operatorId: string,
): Promise<{ id: string; session: Session }> {
  const id = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + SESSION_MAX_AGE_MS);
  await deps.pool.query(
    `INSERT INTO operator_sessions (id_hash, operator_id, csrf_token, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, $4, $4, $5)`,
    [hashSessionId(id), operatorId, csrfToken, now, expiresAt],
  );
  // Sign-in is a good moment to forget this operator's dead sessions.
  await deps.pool.query('DELETE FROM operator_sessions WHERE operator_id = $1 AND expires_at <= $2', [
    operatorId,
    now,
  ]);
  return { id, session: { operatorId, csrfToken, expiresAt } };
}

/**
 * The session of a cookie value, or null when unknown, past its absolute expiry or idle for
 * too long. A live session's last-seen time moves forward (at most once a minute).
 */
export async function findSession(deps: OperatorDeps, id: string): Promise<Session | null> {
  if (!/^[\w-]{20,100}$/.test(id)) return null;
  const now = deps.clock();
  const { rows } = await deps.pool.query<{
    operator_id: string;
    csrf_token: string;
    last_seen_at: Date;
    expires_at: Date;
  }>('SELECT operator_id, csrf_token, last_seen_at, expires_at FROM operator_sessions WHERE id_hash = $1', [
    hashSessionId(id),
  ]);
  const row = rows[0];
  if (!row) return null;
  if (
    row.expires_at.getTime() <= now.getTime() ||
    now.getTime() - row.last_seen_at.getTime() >= SESSION_IDLE_MS
  ) {
    await deleteSession(deps, id);
    return null;
  }
  if (now.getTime() - row.last_seen_at.getTime() >= 60_000) {
    await deps.pool.query('UPDATE operator_sessions SET last_seen_at = $2 WHERE id_hash = $1', [
      hashSessionId(id),
      now,
    ]);
  }
  return { operatorId: row.operator_id, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

/** Ends a session (sign-out). */
export async function deleteSession(deps: Pick<OperatorDeps, 'pool'>, id: string): Promise<void> {
  await deps.pool.query('DELETE FROM operator_sessions WHERE id_hash = $1', [hashSessionId(id)]);
}

/** Compares a presented CSRF token with the session's in constant time. */
export function csrfMatches(expected: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Leaves a one-time value for the session's next page. */
export async function setFlash(deps: Pick<OperatorDeps, 'pool'>, id: string, value: unknown): Promise<void> {
  await deps.pool.query('UPDATE operator_sessions SET flash = $2 WHERE id_hash = $1', [
    hashSessionId(id),
    JSON.stringify(value),
  ]);
}

/** Reads and clears the session's one-time value in one statement. */
export async function takeFlash<T>(deps: Pick<OperatorDeps, 'pool'>, id: string): Promise<T | null> {
  const { rows } = await deps.pool.query<{ flash: T | null }>(
    `WITH old AS (SELECT id_hash, flash FROM operator_sessions WHERE id_hash = $1 FOR UPDATE)
     UPDATE operator_sessions s SET flash = NULL FROM old WHERE s.id_hash = old.id_hash RETURNING old.flash`,
    [hashSessionId(id)],
  );
  return rows[0]?.flash ?? null;
}
