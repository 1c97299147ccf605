import { AppError, withTransaction } from '@outreach/platform';
import { recordActivity } from '../activity/activity.service';
import {
  checkedEmail,
  checkPassword,
  endSessions,
  endSignIns,
  type Operator,
  type OperatorDeps,
  type OperatorRow,
  toOperator,
} from './operators.service';
import { hashPassword } from './passwords';
import { hashSecretToken, isSecretToken, newSecretToken } from './secret-tokens';

/**
 * How long a password reset link works: long enough to reach its operator by hand (no e-mail is
 * sent), short enough that one left in a chat's history soon stops being a way in.
 */
export const PASSWORD_RESET_TTL_MS = 24 * 3600_000;

/** Where a password reset link leads, on the dashboard's host: open without a session (reset.pages.ts). */
export const passwordResetPath = (token: string) => `/dashboard/reset-password/${token}`;

function resetGone(): AppError {
  return new AppError(
    'not_found',
    'This password reset link does not work: it was used or replaced, it expired, or the password was changed since.',
    {
      details: { reason: 'password_reset_gone' },
      hint: 'Ask your Outreach administrator for a new link.',
    },
  );
}

/**
 * Makes a link that lets whoever opens it choose a new password for the account of `email`, as an
 * administrator asks for an operator who forgot theirs: the link's token (256 random bits, stored
 * only hashed), shown once. An account has at most one: a new link replaces the one before. The
 * account's password, sessions and devices stay as they are until the link is used, unless
 * `signOut` asks to end every session and known device at once (a session taken over). Recorded in
 * the activity of every project of the account, as `deps.actor`'s. 404 when no account has the address.
 */
export async function issuePasswordReset(
  deps: OperatorDeps & { actor?: string },
  rawEmail: string,
  options: { signOut?: boolean } = {},
): Promise<{ token: string; operatorId: string; email: string; expiresAt: Date }> {
  const email = checkedEmail(rawEmail);
  const token = newSecretToken();
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  return withTransaction(deps.pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; email: string }>(
      `WITH account AS (SELECT id, email FROM operators WHERE lower(email) = lower($1)),
       issued AS (
         INSERT INTO operator_password_resets (operator_id, token_hash, created_at, expires_at)
         SELECT id, $2, $3, $4 FROM account
         ON CONFLICT (operator_id) DO UPDATE
           SET token_hash = EXCLUDED.token_hash, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         RETURNING operator_id)
       SELECT account.id, account.email FROM account JOIN issued ON issued.operator_id = account.id`,
      [email, hashSecretToken(token), now, expiresAt],
    );
    const account = rows[0];
    if (!account)
      throw new AppError('not_found', 'No account has this address.', { details: { reason: 'no_account' } });
    if (options.signOut) await endSessions(tx, account.id);
    // The link opens every project of the account: each project's operators see that one was made.
    const { rows: memberships } = await tx.query<{ project_id: string }>(
      'SELECT project_id FROM operator_projects WHERE operator_id = $1',
      [account.id],
    );
    for (const { project_id } of memberships)
      await recordActivity(tx, deps, {
        projectId: project_id,
        action: 'operator.password_reset_link',
        targetId: account.id,
        targetName: account.email,
      });
    return { token, operatorId: account.id, email: account.email, expiresAt };
  });
}

/** The address a password reset link is for, and until when it works; 404 when it does not. */
export async function openPasswordReset(
  deps: OperatorDeps,
  token: string,
): Promise<{ email: string; expiresAt: Date }> {
  if (!isSecretToken(token)) throw resetGone();
  const { rows } = await deps.pool.query<{ email: string; expires_at: Date }>(
    `SELECT o.email, r.expires_at FROM operator_password_resets r JOIN operators o ON o.id = r.operator_id
      WHERE r.token_hash = $1 AND r.expires_at > $2`,
    [hashSecretToken(token), deps.clock()],
  );
  if (!rows[0]) throw resetGone();
  return { email: rows[0].email, expiresAt: rows[0].expires_at };
}

/**
 * Uses a password reset link: sets the account's password to the one its holder chose and ends
 * every session and known device of the account, with the link, at once; a link works once. 404
 * when it does not work; 400 for a password shorter than the minimum, the link kept.
 */
export async function resetPassword(deps: OperatorDeps, token: string, password: string): Promise<Operator> {
  checkPassword(password);
  // A link that does not work costs one lookup, not a hash: the page is open to anyone, and each
  // scrypt hash takes 32 MiB and tens of milliseconds.
  await openPasswordReset(deps, token);
  const passwordHash = await hashPassword(password);
  return withTransaction(deps.pool, async (tx) => {
    // Locked: of two uses sent at once, only the first sets a password.
    const { rows } = await tx.query<OperatorRow>(
      `SELECT o.* FROM operator_password_resets r JOIN operators o ON o.id = r.operator_id
        WHERE r.token_hash = $1 AND r.expires_at > $2 FOR UPDATE OF r, o`,
      [hashSecretToken(token), deps.clock()],
    );
    if (!rows[0]) throw resetGone();
    await tx.query('UPDATE operators SET password_hash = $2 WHERE id = $1', [rows[0].id, passwordHash]);
    await endSignIns(tx, rows[0].id);
    return toOperator(rows[0]);
  });
}

/** Deletes the password reset links past their expiry. */
export async function prunePasswordResets(deps: OperatorDeps): Promise<number> {
  const { rowCount } = await deps.pool.query('DELETE FROM operator_password_resets WHERE expires_at <= $1', [
    deps.clock(),
  ]);
  return rowCount ?? 0;
}
