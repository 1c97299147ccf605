import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { OperatorDeps } from './operators.service';
import { hashSecretToken, newSecretToken } from './secret-tokens';

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

/** The stored form of a session id (a secret token: see secret-tokens.ts). */
export const hashSessionId = hashSecretToken;

/** Starts a session; returns the id for the cookie (never stored) and the session. */
export async function createSession(
  deps: OperatorDeps,
  operatorId: string,
): Promise<{ id: string; session: Session }> {
  const id = newSecretToken();
  const csrfToken = newSecretToken();
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

/** How many of an operator's other sessions the Account page lists (the most recently used). */
export const LISTED_SESSIONS = 10;

/**
 * The operator's live sessions other than the one of cookie value `currentId`: how many, and when
 * the LISTED_SESSIONS most recently used began and were last used. No more is kept of a session.
 */
export async function otherSessions(
  deps: OperatorDeps,
  operatorId: string,
  currentId: string,
): Promise<{ count: number; latest: Array<{ startedAt: Date; lastSeenAt: Date }> }> {
  const now = deps.clock();
  const { rows } = await deps.pool.query<{ created_at: Date; last_seen_at: Date; n: number }>(
    `SELECT created_at, last_seen_at, count(*) OVER ()::int AS n FROM operator_sessions
      WHERE operator_id = $1 AND id_hash <> $2 AND expires_at > $3 AND last_seen_at > $4
      ORDER BY last_seen_at DESC, created_at DESC LIMIT $5`,
    [operatorId, hashSessionId(currentId), now, new Date(now.getTime() - SESSION_IDLE_MS), LISTED_SESSIONS],
  );
  return {
    count: rows[0]?.n ?? 0,
    latest: rows.map((r) => ({ startedAt: r.created_at, lastSeenAt: r.last_seen_at })),
  };
}

/**
 * Ends every session of the operator but the one of cookie value `currentId` (a lost phone, a
 * browser left signed in elsewhere); the password and the known devices stay. Returns how many ended.
 */
export async function endOtherSessions(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
  currentId: string,
): Promise<number> {
  const { rowCount } = await deps.pool.query(
    'DELETE FROM operator_sessions WHERE operator_id = $1 AND id_hash <> $2',
    [operatorId, hashSessionId(currentId)],
  );
  return rowCount ?? 0;
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

/** A flash as stored: sealed with a key only the session's cookie gives (AES-256-GCM). */
interface SealedFlash {
  sealed: 1;
  iv: string;
  tag: string;
  data: string;
}

// The flash carries a new API key until its page shows it: sealed with a key derived from the
// session id, which the database never holds (only its hash), the key is never stored readable,
// even when its page is never opened.
const flashKey = (id: string) => Buffer.from(hkdfSync('sha256', id, '', 'outreach dashboard flash', 32));

function sealFlash(id: string, value: unknown): SealedFlash {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(id), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return {
    sealed: 1,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

function openFlash<T>(id: string, flash: SealedFlash): T {
  const decipher = createDecipheriv('aes-256-gcm', flashKey(id), Buffer.from(flash.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(flash.tag, 'base64'));
  const text = Buffer.concat([decipher.update(Buffer.from(flash.data, 'base64')), decipher.final()]);
  return JSON.parse(text.toString('utf8')) as T;
}

/** Leaves a one-time value for the session's next page, sealed with the session's own id. */
export async function setFlash(deps: Pick<OperatorDeps, 'pool'>, id: string, value: unknown): Promise<void> {
  await deps.pool.query('UPDATE operator_sessions SET flash = $2 WHERE id_hash = $1', [
    hashSessionId(id),
    JSON.stringify(sealFlash(id, value)),
  ]);
}

/** Deletes the sessions past their absolute expiry or idle too long (their flash with them). */
export async function pruneSessions(deps: OperatorDeps): Promise<number> {
  const now = deps.clock();
  const { rowCount } = await deps.pool.query(
    'DELETE FROM operator_sessions WHERE expires_at <= $1 OR last_seen_at <= $2',
    [now, new Date(now.getTime() - SESSION_IDLE_MS)],
  );
  return rowCount ?? 0;
}

/** Reads and clears the session's one-time value in one statement. */
export async function takeFlash<T>(deps: Pick<OperatorDeps, 'pool'>, id: string): Promise<T | null> {
  const { rows } = await deps.pool.query<{ flash: T | null }>(
    `WITH old AS (SELECT id_hash, flash FROM operator_sessions WHERE id_hash = $1 FOR UPDATE)
     UPDATE operator_sessions s SET flash = NULL FROM old WHERE s.id_hash = old.id_hash RETURNING old.flash`,
    [hashSessionId(id)],
  );
  const flash = rows[0]?.flash ?? null;
  // Written in the clear by an older version during an upgrade: as it is.
  if (flash === null || (flash as Partial<SealedFlash>).sealed !== 1) return flash;
  return openFlash<T>(id, flash as unknown as SealedFlash);
}
