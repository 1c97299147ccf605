import { AppError, newId, withTransaction } from '@outreach/platform';
import type { Pool } from 'pg';
import { createProject, type Project } from '../projects/projects.service';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyDecoy, verifyPassword } from './passwords';

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

interface OperatorRow {
  id: string;
  email: string;
  password_hash: string;
  time_zone: string | null;
  created_at: Date;
}

const toOperator = (r: OperatorRow): Operator => ({
  id: r.id,
  email: r.email,
  timeZone: r.time_zone ?? 'UTC',
  timeZoneChosen: r.time_zone !== null,
  createdAt: r.created_at.toISOString(),
});

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function invalid(pointer: string, rule: string, message: string): AppError {
  return new AppError('invalid_request', `${pointer.slice(1)} ${message}.`, {
    details: { problems: [{ pointer, rule, message }] },
  });
}

function checkedEmail(raw: string): string {
  const email = raw.trim();
  if (!EMAIL.test(email) || email.length > 254)
    throw invalid('/email', 'format', 'must be an e-mail address');
  return email;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw invalid('/password', 'minLength', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
}

/**
 * Creates an operator, or (when the e-mail exists) sets a new password and ends their sessions,
 * and adds the given project memberships. Returns the operator. For the command line and seed
 * scripts, which hold the database; the dashboard adds operators with `addProjectOperator`.
 */
export async function createOperator(
  deps: OperatorDeps,
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
  // A new password ends every session the old one opened.
  if (rows[0].existed)
    await deps.pool.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operator.id]);
  for (const projectId of input.projectIds ?? []) await addMembership(deps, operator.id, projectId);
  return operator;
}

/**
 * Gives the e-mail's operator access to a project, as an operator of that project (`byOperatorId`)
 * asks in the dashboard: a new account gets `password`; an existing one keeps its own, which no
 * other operator may set (else any operator could take over the accounts, and so the projects, of
 * another). `created` says which.
 *
 * An existing account is added only when every project it manages is one the asking operator
 * manages too. Addresses are not verified, so an account may have been made by another
 * organisation's operator for an address of ours, with a password they know: granting it would
 * hand them our project. Any other existing account is refused; an administrator can add it.
 */
export async function addProjectOperator(
  deps: OperatorDeps,
  input: { email: string; password: string; projectId: string; byOperatorId: string },
): Promise<{ operator: Operator; created: boolean }> {
  const email = checkedEmail(input.email);
  const byEmail = () =>
    deps.pool.query<OperatorRow>('SELECT * FROM operators WHERE lower(email) = lower($1)', [email]);
  let row = (await byEmail()).rows[0];
  let created = false;
  if (!row) {
    checkPassword(input.password);
    const { rows } = await deps.pool.query<OperatorRow>(
      `INSERT INTO operators (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (lower(email)) DO NOTHING RETURNING *`,
      [newId('opr'), email, await hashPassword(input.password), deps.clock()],
    );
    // Created a moment ago by someone else: theirs stands.
    row = rows[0] ?? (await byEmail()).rows[0];
    created = rows.length > 0;
  }
  if (!created && !(await managesAllProjectsOf(deps, input.byOperatorId, row.id)))
    throw invalid(
      '/email',
      'foreign_account',
      'already has an account that manages projects you do not; only an Outreach administrator can add it here',
    );
  const operator = toOperator(row);
  await addMembership(deps, operator.id, input.projectId);
  return { operator, created };
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

/** Makes the operator a member of the project (idempotent); 404 when the project does not exist. */
export async function addMembership(
  deps: OperatorDeps,
  operatorId: string,
  projectId: string,
): Promise<void> {
  const { rowCount } = await deps.pool
    .query(
      `INSERT INTO operator_projects (operator_id, project_id, created_at)
       SELECT $1, id, $3 FROM projects WHERE id = $2
       ON CONFLICT DO NOTHING`,
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
  if (rowCount === 0) {
    const exists = await deps.pool.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
    if (exists.rowCount === 0)
      throw new AppError('not_found', 'Project not found.', { details: { projectId } });
  }
}

/**
 * Creates a project (as the admin API's `createProject` does) with the operator as its member, in
 * one transaction: a project never stays without its operator. 409 when the account was deleted
 * meanwhile (removed from its last project just then).
 */
export async function createOperatorProject(
  deps: OperatorDeps,
  operatorId: string,
  input: { name: string },
): Promise<Project> {
  return withTransaction(deps.pool, async (client) => {
    const project = await createProject({ pool: client, clock: deps.clock }, input);
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
 * theirs, in one transaction (the caller starts a fresh one for the browser that asked). False,
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
    await tx.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operatorId]);
    return true;
  });
}

/** The operator, or null. */
export async function getOperator(
  deps: Pick<OperatorDeps, 'pool'>,
  operatorId: string,
): Promise<Operator | null> {
  const { rows } = await deps.pool.query<OperatorRow>('SELECT * FROM operators WHERE id = $1', [operatorId]);
  return rows.length ? toOperator(rows[0]) : null;
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
  deps: Pick<OperatorDeps, 'pool'>,
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
    const deleted = await client.query(
      `DELETE FROM operators o WHERE o.id = $1
         AND NOT EXISTS (SELECT 1 FROM operator_projects m WHERE m.operator_id = o.id)`,
      [operatorId],
    );
    return { email: operator.rows[0].email, accountDeleted: (deleted.rowCount ?? 0) > 0 };
  });
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
 * machines is paused too, and locking the owner out takes a great many machines, not one.
 */
export const SIGN_IN_MAX_FAILURES_PER_ADDRESS = 100;
/** Failed sign-ins allowed per client, whatever the e-mail: one password tried at many addresses. */
export const SIGN_IN_MAX_FAILURES_PER_CLIENT = 100;
/** The first key of the sign-in locks (two-key advisory locks), "SI". */
const SIGN_IN_LOCK_SPACE = 0x5349;
/** The window failed sign-ins are counted in. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

/**
 * Claims one sign-in attempt of a client at an e-mail address: the seconds until it may try again
 * when one of the limits above is reached (nothing claimed), else 0 with the attempt recorded as a
 * failure, which a success then clears. Counting and recording are one step under a lock per
 * client and one per address, so guesses sent in parallel cannot all pass the count before any is
 * recorded. A client is paused at an address long before the address is paused for everyone, so
 * an outsider who knows an operator's address cannot keep them from signing in.
 */
export function claimSignInAttempt(deps: OperatorDeps, email: string, client: string): Promise<number> {
  const now = deps.clock();
  const address = email.trim().slice(0, 254);
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  return withTransaction(deps.pool, async (tx) => {
    // The two-key form, in a space of its own: an address chosen to hash like another lock's key
    // (the outbox relay's, the migrations') cannot hold that lock. Always the client's first.
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
      SIGN_IN_LOCK_SPACE,
      `client ${client}`,
    ]);
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(lower($2)))', [SIGN_IN_LOCK_SPACE, address]);
    const { rows } = await tx.query<{ at: Date; n: number; limit: number }>(
      `SELECT min(at) AS at, count(*)::int AS n, $4::int AS limit FROM operator_sign_in_failures
        WHERE lower(email) = lower($1) AND client = $2 AND at > $3
       UNION ALL
       SELECT min(at), count(*)::int, $5::int FROM operator_sign_in_failures
        WHERE lower(email) = lower($1) AND at > $3
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
      ],
    );
    const reached = rows.filter((r) => r.n >= r.limit && r.at);
    if (reached.length > 0) {
      const until = Math.max(...reached.map((r) => r.at.getTime() + SIGN_IN_WINDOW_MS));
      return Math.max(1, Math.ceil((until - now.getTime()) / 1000));
    }
    await tx.query('INSERT INTO operator_sign_in_failures (email, client, at) VALUES ($1, $2, $3)', [
      address,
      client,
      now,
    ]);
    await tx.query('DELETE FROM operator_sign_in_failures WHERE at <= $1', [since]);
    return 0;
  });
}

/**
 * Clears a client's failures at an address after it signed in there; other clients' stay
 * counted, so an owner's sign-in gives a guesser elsewhere no fresh tries.
 */
export async function clearSignInFailures(
  deps: Pick<OperatorDeps, 'pool'>,
  email: string,
  client: string,
): Promise<void> {
  await deps.pool.query(
    'DELETE FROM operator_sign_in_failures WHERE lower(email) = lower($1) AND client = $2',
    [email.trim(), client],
  );
}
