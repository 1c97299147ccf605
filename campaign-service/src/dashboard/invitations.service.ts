import { AppError, newId, withTransaction } from '@outreach/platform';
import { forgetInvitees, recordActivity } from '../activity/activity.service';
import {
  ADMINISTRATOR,
  checkedEmail,
  checkPassword,
  type Operator,
  type OperatorDeps,
  type OperatorRow,
  toOperator,
} from './operators.service';
import { hashPassword } from './passwords';
import { hashSecretToken, isSecretToken, newSecretToken } from './secret-tokens';

/** How long an invitation link works. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/** The most invitations a project may have open at once: each is a way in, and they are passed on by hand. */
export const MAX_OPEN_INVITATIONS = 50;

/** Who an invitation an administrator made (create-operator.js) says invited. */
export const INVITED_BY_ADMINISTRATOR = 'an Outreach administrator';

/** An invitation as the project's Operators page lists it (never with its link). */
export interface Invitation {
  id: string;
  email: string;
  /** The inviting operator's address, or INVITED_BY_ADMINISTRATOR. */
  invitedBy: string;
  expiresAt: Date;
}

/** An invitation as its link opens it. */
export interface OpenInvitation {
  email: string;
  projectName: string;
  invitedBy: string;
  expiresAt: Date;
}

/** Where an invitation's link leads, on the dashboard's host: open without a session (join.pages.ts). */
export const invitationPath = (token: string) => `/dashboard/join/${token}`;

function invitationGone(): AppError {
  return new AppError(
    'not_found',
    'This invitation link does not work: it was used, withdrawn or replaced, or it expired.',
    {
      details: { reason: 'invitation_gone' },
      hint: 'Ask the operator who invited you for a new link.',
    },
  );
}

/**
 * Invites an address with no account to manage a project, as its operator `byOperatorId` asks
 * (an administrator when none): returns the link's token (256 random bits, stored only hashed),
 * shown once to whoever invited, to pass on. Inviting the same address to the project again
 * replaces its link. 404 when the project does not exist; 409 once it has MAX_OPEN_INVITATIONS
 * open, or when the address has an account (which is added as the account it is).
 */
export async function inviteOperator(
  deps: OperatorDeps & { actor?: string },
  input: { email: string; projectId: string; byOperatorId?: string },
): Promise<{ token: string; email: string; expiresAt: Date }> {
  const email = checkedEmail(input.email);
  const token = newSecretToken();
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  return withTransaction(deps.pool, async (client) => {
    // Invitations sent at once are counted one after the other.
    const project = await client.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [input.projectId]);
    if (project.rowCount === 0)
      throw new AppError('not_found', 'Project not found.', {
        details: { projectId: input.projectId },
      });
    const open = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM operator_invitations
       WHERE project_id = $1 AND expires_at > $2 AND lower(email) <> lower($3)`,
      [input.projectId, now, email],
    );
    if (open.rows[0].n >= MAX_OPEN_INVITATIONS)
      throw new AppError(
        'conflict',
        `This project has ${MAX_OPEN_INVITATIONS} invitations open, the most it may.`,
        {
          details: { reason: 'invitation_limit', limit: MAX_OPEN_INVITATIONS },
          hint: 'Withdraw invitations no one will use, or wait for them to expire.',
        },
      );
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO operator_invitations (id, project_id, email, token_hash, invited_by, created_at, expires_at)
       SELECT $1, $2, $3, $4, $5, $6, $7
       WHERE NOT EXISTS (SELECT 1 FROM operators WHERE lower(email) = lower($3))
       ON CONFLICT (project_id, lower(email)) DO UPDATE
         SET email = EXCLUDED.email, token_hash = EXCLUDED.token_hash, invited_by = EXCLUDED.invited_by,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       RETURNING id`,
      [
        newId('inv'),
        input.projectId,
        email,
        hashSecretToken(token),
        input.byOperatorId ?? null,
        now,
        expiresAt,
      ],
    );
    if (!rows[0])
      throw new AppError('conflict', 'This address has an account.', {
        details: { reason: 'account_exists' },
        hint: 'Add it again: it is then added as the account it is.',
      });
    // Its address stays while the invitation is open, and goes once it ends unused (forgetInvitees).
    await recordActivity(client, deps, {
      projectId: input.projectId,
      action: 'operator.invited',
      targetId: rows[0].id,
      targetName: email,
    });
    return { token, email, expiresAt };
  });
}

/** The project's invitations still open, soonest to expire first. */
export async function listInvitations(deps: OperatorDeps, projectId: string): Promise<Invitation[]> {
  const { rows } = await deps.pool.query<{
    id: string;
    email: string;
    invited_by: string | null;
    expires_at: Date;
  }>(
    `SELECT i.id, i.email, o.email AS invited_by, i.expires_at
     FROM operator_invitations i LEFT JOIN operators o ON o.id = i.invited_by
     WHERE i.project_id = $1 AND i.expires_at > $2 ORDER BY i.expires_at, i.id`,
    [projectId, deps.clock()],
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    invitedBy: r.invited_by ?? INVITED_BY_ADMINISTRATOR,
    expiresAt: r.expires_at,
  }));
}

/** Withdraws an invitation: its link stops working at once. Returns its address; 404 when it is not open. */
export async function withdrawInvitation(
  deps: Pick<OperatorDeps, 'pool'>,
  projectId: string,
  invitationId: string,
): Promise<{ email: string }> {
  return withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<{ email: string }>(
      'DELETE FROM operator_invitations WHERE project_id = $1 AND id = $2 RETURNING email',
      [projectId, invitationId],
    );
    if (!rows[0])
      throw new AppError('not_found', 'This invitation is no longer open.', {
        details: { projectId, invitationId },
      });
    await forgetInvitees(client, [invitationId]);
    return rows[0];
  });
}

/** What an invitation link opens: the address, the project and who invited; 404 when it does not work. */
export async function openInvitation(deps: OperatorDeps, token: string): Promise<OpenInvitation> {
  if (!isSecretToken(token)) throw invitationGone();
  const { rows } = await deps.pool.query<{
    email: string;
    project_name: string;
    invited_by: string | null;
    expires_at: Date;
  }>(
    `SELECT i.email, p.name AS project_name, o.email AS invited_by, i.expires_at
     FROM operator_invitations i JOIN projects p ON p.id = i.project_id LEFT JOIN operators o ON o.id = i.invited_by
     WHERE i.token_hash = $1 AND i.expires_at > $2`,
    [hashSecretToken(token), deps.clock()],
  );
  const r = rows[0];
  if (!r) throw invitationGone();
  return {
    email: r.email,
    projectName: r.project_name,
    invitedBy: r.invited_by ?? INVITED_BY_ADMINISTRATOR,
    expiresAt: r.expires_at,
  };
}

/**
 * Uses an invitation link: creates the invited address's account with the password its holder
 * chose, makes it an operator of the project (recorded in the project's activity as added by the
 * inviting operator) and deletes the invitation, all at once; a link works once. 404 when it does
 * not work; 409 when the address got an account meanwhile, which keeps its own password.
 */
export async function acceptInvitation(
  deps: OperatorDeps,
  token: string,
  password: string,
): Promise<{ operator: Operator; projectId: string }> {
  checkPassword(password);
  // A link that does not work costs one lookup, not a hash: the page is open to anyone, and each
  // scrypt hash takes 32 MiB and tens of milliseconds.
  await openInvitation(deps, token);
  const passwordHash = await hashPassword(password);
  return withTransaction(deps.pool, async (client) => {
    const now = deps.clock();
    const { rows } = await client.query<{
      id: string;
      project_id: string;
      email: string;
      invited_by: string | null;
    }>(
      `SELECT i.id, i.project_id, i.email, o.email AS invited_by
       FROM operator_invitations i LEFT JOIN operators o ON o.id = i.invited_by
       WHERE i.token_hash = $1 AND i.expires_at > $2 FOR UPDATE OF i`,
      [hashSecretToken(token), now],
    );
    const invitation = rows[0];
    if (!invitation) throw invitationGone();
    const created = await client.query<OperatorRow>(
      `INSERT INTO operators (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (lower(email)) DO NOTHING RETURNING *`,
      [newId('opr'), invitation.email, passwordHash, now],
    );
    if (!created.rows[0])
      throw new AppError('conflict', `${invitation.email} has an account already.`, {
        details: { reason: 'account_exists' },
        hint: 'Sign in with it, and ask the operator who invited you to add it to the project.',
      });
    const operator = toOperator(created.rows[0]);
    await client.query(
      'INSERT INTO operator_projects (operator_id, project_id, created_at) VALUES ($1, $2, $3)',
      [operator.id, invitation.project_id, now],
    );
    await client.query('DELETE FROM operator_invitations WHERE id = $1', [invitation.id]);
    // From now on the entries name an operator: they go with the account (forgetInActivity).
    const invited = await client.query<{ seq: string; actor: string }>(
      `UPDATE project_activity SET target_id = $2 WHERE action = 'operator.invited' AND target_id = $1
       RETURNING seq, actor`,
      [invitation.id, operator.id],
    );
    // An administrator's invitation (no inviting operator) is added by whoever made it last: the
    // admin API or create-operator.js.
    const administrator = invited.rows.sort((x, y) => Number(y.seq) - Number(x.seq))[0]?.actor;
    await recordActivity(
      client,
      { clock: deps.clock, actor: invitation.invited_by ?? administrator ?? ADMINISTRATOR },
      {
        projectId: invitation.project_id,
        action: 'operator.added',
        targetId: operator.id,
        targetName: operator.email,
      },
    );
    return { operator, projectId: invitation.project_id };
  });
}

/** Deletes the invitations past their expiry, their addresses with them, in the activity too. */
export async function pruneInvitations(deps: OperatorDeps): Promise<number> {
  return withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      'DELETE FROM operator_invitations WHERE expires_at <= $1 RETURNING id',
      [deps.clock()],
    );
    await forgetInvitees(
      client,
      rows.map((r) => r.id),
    );
    return rows.length;
  });
}
