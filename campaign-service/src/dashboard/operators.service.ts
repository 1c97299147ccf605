import { isIPv6 } from 'node:net';
import { AppError, newId, withTransaction } from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';
import { forgetInvitees, recordActivity } from '../activity/activity.service';
import { insertProject, type Project } from '../projects/projects.service';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyDecoy, verifyPassword } from './passwords';
import { hashSecretToken, isSecretToken, newSecretToken } from './secret-tokens';

/** What operator functions need. */
export interface OperatorDeps {
  pool: Pool;
  clock: () => Date;
}

/** A dashboard operator (never with the password hash). */
export interface Operator {
  id: string;
  email: string;
  /** The zone the dashboard shows times in: the operator's choice, else UTC. */
  timeZone: string;
  /** False until the operator chooses a zone; the dashboard then offers the browser's. */
  timeZoneChosen: boolean;
  createdAt: string;
}

/** An operator as stored. */
export interface OperatorRow {
  id: string;
  email: string;
  password_hash: string;
  time_zone: string | null;
  created_at: Date;
}

/** An operator row without its password hash. */
export const toOperator = (r: OperatorRow): Operator => ({
  id: r.id,
  email: r.email,
  timeZone: r.time_zone ?? 'UTC',
  timeZoneChosen: r.time_zone !== null,
  createdAt: r.created_at.toISOString(),
});

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A refusal of one form field (`pointer`), as the dashboard's forms show it. */
export function invalid(pointer: string, rule: string, message: string): AppError {
  return new AppError('invalid_request', `${pointer.slice(1)} ${message}.`, {
    details: { problems: [{ pointer, rule, message }] },
  });
}

// Control and format characters (bidi overrides among them) would let an address display as
// another one: on the Operators page, and as who made a change in the project's activity.
const HIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}]/u;

/** The address trimmed; 400 unless it is one, short enough and free of hidden characters. */
export function checkedEmail(raw: string): string {
  const email = raw.trim();
  if (!EMAIL.test(email) || email.length > 254 || HIDDEN_CHARACTERS.test(email))
    throw invalid('/email', 'format', 'must be an e-mail address');
  return email;
}

/** Who the project's activity says acted through create-operator.js (an administrator on the server). */
export const ADMINISTRATOR = 'create-operator (an administrator)';

/** What the project's activity says of an operator whose account was deleted. */
export const FORMER_OPERATOR = 'a former operator';

/** 400 unless the password is long enough. */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw invalid('/password', 'minLength', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
}

/**
 * Creates an operator, or (when the e-mail exists) sets a new password, ends their sessions and
 * forgets their known devices, and adds the given project memberships. Returns the operator. For the command line and seed
 * scripts, which hold the database; the dashboard adds operators with `addProjectOperator`.
 */
export async function createOperator(
  deps: OperatorDeps & { actor?: string },
  input: { email: string; password: string; projectIds?: string[] },
): Promise<Operator> {
  const email = checkedEmail(input.email);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock();
  const { rows } = await deps.pool.query<OperatorRow & { existed: boolean }>(
    `INSERT INTO operators (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (lower(email)) DO UPDATE SET password_hash = EXCLUDED.password_hash
     RETURNING *, (xmax <> 0) AS existed`,
    [newId('opr'), email, passwordHash, now],
  );
  const operator = toOperator(rows[0]);
  if (rows[0].existed) await endSignIns(deps.pool, operator.id);
  for (const projectId of input.projectIds ?? []) await addMembership(deps, operator.id, projectId);
  return operator;
}

/**
 * Gives the e-mail's existing account access to a project, as an operator of that project
 * (`byOperatorId`) asks in the dashboard; null when the address has no account (the dashboard
 * invites it then: see `inviteOperator`). The account keeps its own password, which no other
 * operator may set (else any operator could take over the accounts, and so the projects, of
 * another).
 *
 * An existing account is added only when every project it manages is one the asking operator
 * manages too. Addresses are not verified, so an account may have been made by another
 * organisation's operator for an address of ours, with a password they know: granting it would
 * hand them our project. Any other existing account is refused; an administrator can add it.
 */
export async function addProjectOperator(
  deps: OperatorDeps & { actor?: string },
  input: { email: string; projectId: string; byOperatorId: string },
): Promise<Operator | null> {
  const email = checkedEmail(input.email);
  const { rows } = await deps.pool.query<OperatorRow>(
    'SELECT * FROM operators WHERE lower(email) = lower($1)',
    [email],
  );
  if (!rows[0]) return null;
  if (!(await managesAllProjectsOf(deps, input.byOperatorId, rows[0].id)))
    throw invalid(
      '/email',
      'foreign_account',
      'already has an account that manages projects you do not; only an Outreach administrator can add it here',
    );
  const operator = toOperator(rows[0]);
  await addMembership(deps, operator.id, input.projectId);
  return operator;
}

/** Whether `operatorId` manages every project that `otherId` manages. */
async function managesAllProjectsOf(
  deps: OperatorDeps,
  operatorId: string,
  otherId: string,
): Promise<boolean> {
  const { rowCount } = await deps.pool.query(
    `SELECT 1 FROM operator_projects theirs
     WHERE theirs.operator_id = $2
       AND NOT EXISTS (SELECT 1 FROM operator_projects mine
                       WHERE mine.operator_id = $1 AND mine.project_id = theirs.project_id)
     LIMIT 1`,
    [operatorId, otherId],
  );
  return rowCount === 0;
}

/**
 * Makes the operator a member of the project (idempotent), recorded in the project's activity when
 * it adds them; 404 when the project does not exist.
 */
export async function addMembership(
  deps: OperatorDeps & { actor?: string },
  operatorId: string,
  projectId: string,
): Promise<void> {
  await withTransaction(deps.pool, async (client) => {
    const { rows } = await client
      .query<{ email: string }>(
        `WITH added AS (
           INSERT INTO operator_projects (operator_id, project_id, created_at)
           SELECT $1, id, $3 FROM projects WHERE id = $2
           ON CONFLICT DO NOTHING RETURNING operator_id)
         SELECT o.email FROM added JOIN operators o ON o.id = added.operator_id`,
        [operatorId, projectId, deps.clock()],
      )
      .catch((err: { code?: string; constraint?: string }) => {
        // The account was deleted meanwhile (removed from its last project just then).
        if (err.code === '23503' && err.constraint?.includes('operator_id'))
          throw new AppError('conflict', 'This operator was removed meanwhile.', {
            details: { reason: 'operator_removed', operatorId },
            hint: 'Add them again.',
          });
        throw err;
      });
    if (rows.length > 0) {
      await recordActivity(client, deps, {
        projectId,
        action: 'operator.added',
        targetId: operatorId,
        targetName: rows[0].email,
      });
      return;
    }
    const exists = await client.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
    if (exists.rowCount === 0)
      throw new AppError('not_found', 'Project not found.', { details: { projectId } });
  });
}

/** The refusal of a new project to an operator who manages `limit` projects or more. */
export function projectLimitReached(limit: number, projects: number): AppError {
  return new AppError('conflict', `You manage ${projects} projects, the most one operator may.`, {
    details: { reason: 'project_limit', limit, projects },
    hint: 'An Outreach administrator can create the project for you.',
  });
}

/** How many projects the operator manages. */
async function countOperatorProjects(db: Pool | PoolClient, operatorId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM operator_projects WHERE operator_id = $1',
    [operatorId],
  );
  return rows[0].n;
}

/**
 * Creates a project (as the admin API's `createProject` does) with the operator as its member, in
 * one transaction: a project never stays without its operator. 409 when the account was deleted
 * meanwhile (removed from its last project just then), or when the operator already manages
 * `operatorProjectLimit` projects (counted under the operator's row lock, so that creations sent
 * at once cannot pass it together).
 */
export async function createOperatorProject(
  deps: OperatorDeps & { actor?: string; operatorProjectLimit: number },
  operatorId: string,
  input: { name: string },
): Promise<Project> {
  return withTransaction(deps.pool, async (client) => {
    const locked = await client.query('SELECT 1 FROM operators WHERE id = $1 FOR UPDATE', [operatorId]);
    if (locked.rowCount === 1) {
      const projects = await countOperatorProjects(client, operatorId);
      if (projects >= deps.operatorProjectLimit)
        throw projectLimitReached(deps.operatorProjectLimit, projects);
    }
    const project = await insertProject(client, deps, input);
    const { rowCount } = await client.query(
      `INSERT INTO operator_projects (operator_id, project_id, created_at)
       SELECT id, $2, $3 FROM operators WHERE id = $1`,
      [operatorId, project.id, deps.clock()],
    );
    if (rowCount === 0)
      throw new AppError('conflict', 'This operator was removed meanwhile.', {
        details: { reason: 'operator_removed', operatorId },
      });
    return project;
  });
}

/** Checks e-mail and password; the same `null` for an unknown e-mail and a wrong password. */
export async function authenticateOperator(
  deps: OperatorDeps,
  email: string,
  password: string,
): Promise<Operator | null> {
  const { rows } = await deps.pool.query<OperatorRow>(
    'SELECT * FROM operators WHERE lower(email) = lower($1)',
    [email.trim()],
  );
  if (rows.length === 0) return verifyDecoy(password).then(() => null);
  return (await verifyPassword(password, rows[0].password_hash)) ? toOperator(rows[0]) : null;
}

/**
 * Sets a signed-in operator's own password, when `current` is theirs now, and ends every session of
 * theirs and forgets their known devices, in one transaction (the caller starts a fresh one for the browser that asked). False,
 * changing nothing, for a wrong current password; the caller counts it as a failed sign-in
 * (claimSignInAttempt) before asking. A new password shorter than the minimum is refused (400).
 */
export async function changeOperatorPassword(
  deps: OperatorDeps,
  operatorId: string,
  current: string,
  next: string,
): Promise<boolean> {
  checkPassword(next);
  const passwordHash = await hashPassword(next);
  return withTransaction(deps.pool, async (tx) => {
    // Locked: of two changes sent at once with the same current password, only the first applies.
    const { rows } = await tx.query<OperatorRow>('SELECT * FROM operators WHERE id = $1 FOR UPDATE', [
      operatorId,
    ]);
    if (rows.length === 0 || !(await verifyPassword(current, rows[0].password_hash))) return false;
    await tx.query('UPDATE operators SET password_hash = $2 WHERE id = $1', [operatorId, passwordHash]);
    await endSignIns(tx, operatorId);
    return true;
  });
}

/**
 * What a new password ends: every session the old one opened, the devices it signed in on, and
 * a password reset link still open (made for the password the account no longer has).
 */
export async function endSignIns(db: Pick<Pool, 'query'>, operatorId: string): Promise<void> {
  await endSessions(db, operatorId);
  await db.query('DELETE FROM operator_password_resets WHERE operator_id = $1', [operatorId]);
}

/** Signs an operator out everywhere: every session ends, and no device is known any more. */
export async function endSessions(db: Pick<Pool, 'query'>, operatorId: string): Promise<void> {
  await db.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operatorId]);
  await db.query('DELETE FROM operator_devices WHERE operator_id = $1', [operatorId]);
}

/** The operator, or null. */
export async function getOperator(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
): Promise<Operator | null> {
  const { rows } = await deps.pool.query<OperatorRow>('SELECT * FROM operators WHERE id = $1', [operatorId]);
  return rows.length ? toOperator(rows[0]) : null;
}

/**
 * Gives the existing account of `email` access to projects, as an administrator does (no
 * password changes); 404 when no account has the address, or a project does not exist.
 */
export async function grantProjects(
  deps: OperatorDeps & { actor?: string },
  email: string,
  projectIds: string[],
): Promise<Operator> {
  const { rows } = await deps.pool.query<OperatorRow>(
    'SELECT * FROM operators WHERE lower(email) = lower($1)',
    [checkedEmail(email)],
  );
  if (!rows[0])
    throw new AppError('not_found', 'No account has this address.', {
      hint: 'Invite it instead.',
    });
  for (const projectId of projectIds) await addMembership(deps, rows[0].id, projectId);
  return toOperator(rows[0]);
}

/** Remembers the operator's preferred time zone (used to show instants). */
export async function setOperatorTimeZone(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
  timeZone: string,
) {
  await deps.pool.query('UPDATE operators SET time_zone = $2 WHERE id = $1', [operatorId, timeZone]);
}

/** The projects the operator belongs to, oldest first. */
export async function listOperatorProjects(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
): Promise<Project[]> {
  const { rows } = await deps.pool.query<{ id: string; name: string; created_at: Date }>(
    `SELECT p.* FROM projects p JOIN operator_projects m ON m.project_id = p.id
      WHERE m.operator_id = $1 ORDER BY p.created_at, p.id COLLATE "C"`,
    [operatorId],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at.toISOString() }));
}

/**
 * The project when the operator is a member; otherwise 404 `not_found`, the same answer as
 * for a project that does not exist, so an operator learns nothing about other projects.
 */
export async function requireMembership(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
  projectId: string,
): Promise<Project> {
  const { rows } = await deps.pool.query<{ id: string; name: string; created_at: Date }>(
    `SELECT p.* FROM projects p JOIN operator_projects m ON m.project_id = p.id
      WHERE m.operator_id = $1 AND p.id = $2`,
    [operatorId, projectId],
  );
  if (rows.length === 0) throw new AppError('not_found', 'Project not found.', { details: { projectId } });
  return { id: rows[0].id, name: rows[0].name, createdAt: rows[0].created_at.toISOString() };
}

/**
 * Takes an operator off a project (someone who left, say): their access to it ends with their
 * next request. An operator left with no project is deleted, their sessions and e-mail address
 * with them. A project's last operator stays (409), or nobody could manage it from the dashboard.
 * Returns their address and whether the account itself was deleted; 404 when the operator is no member.
 */
export async function removeProjectOperator(
  deps: Pick<OperatorDeps, 'pool' | 'clock'> & { actor?: string },
  projectId: string,
  operatorId: string,
): Promise<{ email: string; accountDeleted: boolean }> {
  return withTransaction(deps.pool, async (client) => {
    // The operator first: removals of one operator from two projects at once then go one after
    // the other (the second sees the first's and deletes the account left with no project), and
    // a grant to them waits for the removal. Then the project's memberships, so that two removals
    // at once cannot leave it with none.
    const operator = await client.query<{ email: string }>(
      'SELECT email FROM operators WHERE id = $1 FOR UPDATE',
      [operatorId],
    );
    const { rows } = await client.query<{ operator_id: string }>(
      'SELECT operator_id FROM operator_projects WHERE project_id = $1 FOR UPDATE',
      [projectId],
    );
    if (!rows.some((r) => r.operator_id === operatorId))
      throw new AppError('not_found', 'This operator is not a member of the project.', {
        details: { projectId, operatorId },
      });
    if (rows.length === 1)
      throw new AppError('conflict', 'The last operator of a project cannot be removed.', {
        details: { reason: 'last_operator', projectId },
        hint: 'Add another operator first.',
      });
    await client.query('DELETE FROM operator_projects WHERE project_id = $1 AND operator_id = $2', [
      projectId,
      operatorId,
    ]);
    // What they were trusted with here goes with them: a link they passed on no longer works.
    const ended = await client.query<{ id: string }>(
      'DELETE FROM operator_invitations WHERE project_id = $1 AND invited_by = $2 RETURNING id',
      [projectId, operatorId],
    );
    await forgetInvitees(
      client,
      ended.rows.map((r) => r.id),
    );
    await recordActivity(client, deps, {
      projectId,
      action: 'operator.removed',
      targetId: operatorId,
      targetName: operator.rows[0].email,
    });
    const deleted = await client.query(
      `DELETE FROM operators o WHERE o.id = $1
         AND NOT EXISTS (SELECT 1 FROM operator_projects m WHERE m.operator_id = o.id)`,
      [operatorId],
    );
    const accountDeleted = (deleted.rowCount ?? 0) > 0;
    // The address goes with the account: the activity keeps what they did, not who they were.
    if (accountDeleted) await forgetInActivity(client, operatorId, operator.rows[0].email);
    return { email: operator.rows[0].email, accountDeleted };
  });
}

/** Replaces a deleted account's e-mail address in every project's activity, as actor and as target. */
async function forgetInActivity(client: PoolClient, operatorId: string, email: string): Promise<void> {
  await client.query('UPDATE project_activity SET actor = $2 WHERE lower(actor) = lower($1)', [
    email,
    FORMER_OPERATOR,
  ]);
  await client.query(
    "UPDATE project_activity SET target_name = $2 WHERE target_id = $1 AND action LIKE 'operator.%'",
    [operatorId, FORMER_OPERATOR],
  );
}

/** The members of a project. */
export async function listProjectOperators(
  deps: Pick<OperatorDeps, 'pool'>,
  projectId: string,
): Promise<Operator[]> {
  const { rows } = await deps.pool.query<OperatorRow>(
    `SELECT o.* FROM operators o JOIN operator_projects m ON m.operator_id = o.id
      WHERE m.project_id = $1 ORDER BY m.created_at, o.id COLLATE "C"`,
    [projectId],
  );
  return rows.map(toOperator);
}

/** Failed sign-ins allowed per e-mail address and client inside the window before that client's are paused. */
export const SIGN_IN_MAX_FAILURES = 10;
/**
 * Failed sign-ins allowed per e-mail address from all clients together: guessing from many
 * machines is paused too. A sign-in from a known device of the address's operator is counted by its
 * own failures instead, so outsiders, however many machines they hold, cannot lock the owner out.
 */
export const SIGN_IN_MAX_FAILURES_PER_ADDRESS = 100;
/** Failed sign-ins allowed per client, whatever the e-mail: one password tried at many addresses. */
export const SIGN_IN_MAX_FAILURES_PER_CLIENT = 100;
/**
 * The first keys of the sign-in locks (two-key advisory locks): one space for clients ("SC") and
 * another for addresses ("SA"), so that no address typed to look like a client takes its lock.
 * Always the client's first, then the address's.
 */
const SIGN_IN_CLIENT_LOCK_SPACE = 0x5343;
const SIGN_IN_ADDRESS_LOCK_SPACE = 0x5341;
/** The window failed sign-ins are counted in. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** A known device stays known this long after the last sign-in from it (its cookie's lifetime). */
export const KNOWN_DEVICE_MAX_AGE_MS = 90 * 86400_000;

/**
 * The client failed sign-ins are counted by: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * too), an IPv6 address by its /64, since whoever has one address of a /64 usually has them all.
 */
export function signInClient(ip: string): string {
  const bare = ip.replace(/%.*$/, '');
  if (!isIPv6(bare)) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1];
  const groups = (part: string | undefined) =>
    part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : [];
  const [left, right] = bare.split('::');
  const head = groups(left);
  const tail = groups(right);
  const all = [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * The hash of `token` when it is a known device of the operator of `email` (signed in from within
 * KNOWN_DEVICE_MAX_AGE_MS), else ''.
 */
async function knownDevice(
  db: Pick<Pool, 'query'>,
  email: string,
  token: string | undefined,
  now: Date,
): Promise<string> {
  if (!token || !isSecretToken(token)) return '';
  const hash = hashSecretToken(token);
  const { rowCount } = await db.query(
    `SELECT 1 FROM operator_devices d JOIN operators o ON o.id = d.operator_id
      WHERE d.token_hash = $1 AND lower(o.email) = lower($2) AND d.last_used_at > $3`,
    [hash, email, new Date(now.getTime() - KNOWN_DEVICE_MAX_AGE_MS)],
  );
  return rowCount ? hash : '';
}

/**
 * Remembers the browser an operator just signed in from (or changed their password in) as a known
 * device: the token it presented when that is a known device of theirs (its lifetime renewed), else
 * a new one (256 random bits, stored only hashed). Returns the token for the cookie. Forgets the
 * operator's devices unused for KNOWN_DEVICE_MAX_AGE_MS.
 */
export async function rememberDevice(
  deps: OperatorDeps,
  operatorId: string,
  presented: string | undefined,
): Promise<string> {
  const now = deps.clock();
  const stale = new Date(now.getTime() - KNOWN_DEVICE_MAX_AGE_MS);
  await deps.pool.query('DELETE FROM operator_devices WHERE operator_id = $1 AND last_used_at <= $2', [
    operatorId,
    stale,
  ]);
  if (presented && isSecretToken(presented)) {
    const { rowCount } = await deps.pool.query(
      'UPDATE operator_devices SET last_used_at = $3 WHERE token_hash = $1 AND operator_id = $2',
      [hashSecretToken(presented), operatorId, now],
    );
    if (rowCount) return presented;
  }
  const token = newSecretToken();
  await deps.pool.query(
    `INSERT INTO operator_devices (token_hash, operator_id, created_at, last_used_at)
     SELECT $1, id, $3, $3 FROM operators WHERE id = $2`,
    [hashSecretToken(token), operatorId, now],
  );
  return token;
}

/**
 * Claims one sign-in attempt of a client at an e-mail address: the seconds until it may try again
 * when one of the limits above is reached (nothing claimed), else 0 with the attempt recorded as a
 * failure, which a success then clears. Counting and recording are one step under a lock per
 * client and one per address, so guesses sent in parallel cannot all pass the count before any is
 * recorded. A client is paused at an address long before the address is paused for everyone, so
 * an outsider who knows an operator's address cannot keep them from signing in from elsewhere.
 * `ip` is counted as signInClient says (an IPv6 address by its /64).
 *
 * `device` is the known-device cookie the attempt came with. When it is a known device of the
 * address's operator, the attempt is exempt from the address-wide count of everyone's failures:
 * its failures (recorded with the device) are counted apart, to the same limit, so that only the
 * owner's cookie fills or uses that count, and a stolen cookie spread over many machines still gets
 * no more tries than the address-wide limit. The limits per client at the address and per client
 * still apply. Any other value counts as no device.
 */
export function claimSignInAttempt(
  deps: OperatorDeps,
  email: string,
  ip: string,
  device?: string,
): Promise<number> {
  const now = deps.clock();
  const address = email.trim().slice(0, 254);
  const client = signInClient(ip);
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  return withTransaction(deps.pool, async (tx) => {
    // The two-key form, in spaces of their own: an address chosen to hash like another lock's key
    // (the outbox relay's, the migrations', a client's) cannot hold that lock.
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SIGN_IN_CLIENT_LOCK_SPACE, client]);
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(lower($2)))', [
      SIGN_IN_ADDRESS_LOCK_SPACE,
      address,
    ]);
    const known = await knownDevice(tx, address, device, now);
    type Count = { at: Date | null; n: number; limit: number };
    // The address-wide count: a known device's own failures, else everyone's.
    const { rows } = await tx.query<Count>(
      `SELECT min(at) AS at, count(*)::int AS n, $4::int AS limit FROM operator_sign_in_failures
        WHERE lower(email) = lower($1) AND client = $2 AND at > $3
       UNION ALL
       SELECT min(at), count(*)::int, $5::int FROM operator_sign_in_failures
        WHERE lower(email) = lower($1) AND ($7 = '' OR device = $7) AND at > $3
       UNION ALL
       SELECT min(at), count(*)::int, $6::int FROM operator_sign_in_failures
        WHERE client = $2 AND at > $3`,
      [
        address,
        client,
        since,
        SIGN_IN_MAX_FAILURES,
        SIGN_IN_MAX_FAILURES_PER_ADDRESS,
        SIGN_IN_MAX_FAILURES_PER_CLIENT,
        known,
      ],
    );
    const reached = rows.filter((r): r is Count & { at: Date } => r.n >= r.limit && r.at !== null);
    if (reached.length > 0) {
      const until = Math.max(...reached.map((r) => r.at.getTime() + SIGN_IN_WINDOW_MS));
      return Math.max(1, Math.ceil((until - now.getTime()) / 1000));
    }
    await tx.query(
      'INSERT INTO operator_sign_in_failures (email, client, device, at) VALUES ($1, $2, $3, $4)',
      [address, client, known, now],
    );
    await tx.query('DELETE FROM operator_sign_in_failures WHERE at <= $1', [since]);
    return 0;
  });
}

/**
 * Clears a client's failures at an address after it signed in there (and those of the known
 * device it signed in with); other clients' stay counted, so an owner's sign-in gives a guesser
 * elsewhere no fresh tries.
 */
export async function clearSignInFailures(
  deps: Pick<OperatorDeps, 'pool'>,
  email: string,
  ip: string,
  device?: string,
): Promise<void> {
  const hash = device && isSecretToken(device) ? hashSecretToken(device) : '';
  await deps.pool.query(
    `DELETE FROM operator_sign_in_failures
      WHERE lower(email) = lower($1) AND (client = $2 OR (device <> '' AND device = $3))`,
    [email.trim(), signInClient(ip), hash],
  );
}
